// Package buildinfo reads what the binary knows about its own build: the
// module version and the VCS revision, time and dirty flag that the go
// command stamps into every binary built in a checkout (go build, go
// install, go run), so `herald version` and the herald_build_info metric
// tell which code is running without any linker flags.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// Info is what one binary knows about its build.
type Info struct {
	// Version is the module version (v1.2.3, or a pseudo-version such as
	// v0.0.0-20261124221500-4f4d0b1c2d3e+dirty for a checkout), the
	// version given with -ldflags "-X main.version=…" when there is
	// one, or "(devel)" when the go command knew none.
	Version string
	// Revision is the VCS commit the binary was built from ("" when
	// unknown, e.g. built outside a checkout).
	Revision string
	// Time is the commit's time (zero when unknown).
	Time time.Time
	// Modified says the checkout had uncommitted changes.
	Modified bool
	// GoVersion is the Go release that built the binary.
	GoVersion string
}

// Read returns the running binary's build information. override, when
// neither empty nor "dev", is a version given by the linker and wins over
// the module version.
func Read(override string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)"}.Override(override)
	}
	return FromBuildInfo(bi).Override(override)
}

// Override returns i with the version a linker flag gave, unless that
// is empty or "dev" (the unset default).
func (i Info) Override(version string) Info {
	if version != "" && version != "dev" {
		i.Version = version
	}
	return i
}

// FromBuildInfo reads Info out of bi.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the one line `herald version` prints, e.g.
// "herald v1.2.0 (commit 4f4d0b1c2d3e, 2026-11-24T22:15:00Z) go1.26.8".
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "herald %s", i.Version)
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, " (commit %s", rev)
		if !i.Time.IsZero() {
			fmt.Fprintf(&b, ", %s", i.Time.UTC().Format(time.RFC3339))
		}
		if i.Modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	if i.GoVersion != "" {
		fmt.Fprintf(&b, " %s", i.GoVersion)
	}
	return b.String()
}
