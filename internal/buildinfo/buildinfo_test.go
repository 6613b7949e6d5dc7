package buildinfo_test

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/buildinfo"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/heraldpush/herald", Version: "v0.0.0-20261124221500-4f4d0b1c2d3e+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "4f4d0b1c2d3e4f4d0b1c2d3e4f4d0b1c2d3e4f4d"},
			{Key: "vcs.time", Value: "2026-11-24T22:15:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name     string
		bi       *debug.BuildInfo
		override string
		want     buildinfo.Info
		line     string
	}{
		{"checkout build", stamped, "", buildinfo.Info{
			Version: "v0.0.0-20261124221500-4f4d0b1c2d3e+dirty", Revision: "4f4d0b1c2d3e4f4d0b1c2d3e4f4d0b1c2d3e4f4d",
			Time: time.Date(2026, 11, 24, 22, 15, 0, 0, time.UTC), Modified: true, GoVersion: "go1.26.8",
		}, "herald v0.0.0-20261124221500-4f4d0b1c2d3e+dirty (commit 4f4d0b1c2d3e, 2026-11-24T22:15:00Z, modified) go1.26.8"},
		{"release build with a linker version", stamped, "v1.2.0", buildinfo.Info{
			Version: "v1.2.0", Revision: "4f4d0b1c2d3e4f4d0b1c2d3e4f4d0b1c2d3e4f4d",
			Time: time.Date(2026, 11, 24, 22, 15, 0, 0, time.UTC), Modified: true, GoVersion: "go1.26.8",
		}, "herald v1.2.0 (commit 4f4d0b1c2d3e, 2026-11-24T22:15:00Z, modified) go1.26.8"},
		{"go install of a tagged module", &debug.BuildInfo{GoVersion: "go1.25.0",
			Main: debug.Module{Version: "v1.2.0"}}, "dev",
			buildinfo.Info{Version: "v1.2.0", GoVersion: "go1.25.0"}, "herald v1.2.0 go1.25.0"},
		{"nothing known", &debug.BuildInfo{}, "", buildinfo.Info{Version: "(devel)"}, "herald (devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildinfo.FromBuildInfo(tt.bi).Override(tt.override)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if got.String() != tt.line {
				t.Fatalf("String() = %q, want %q", got.String(), tt.line)
			}
		})
	}
}
