package builtin_test

import (
	"slices"
	"testing"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/builtin"
)

func TestPlatforms(t *testing.T) {
	want := []string{"bark", "dingtalk", "feishu", "gotify", "ntfy", "pushplus", "qq", "serverchan", "slack", "telegram", "wechat", "wecom"}
	for _, env := range []*platforms.Env{nil, platforms.NewEnv(platforms.Options{})} {
		s := builtin.Platforms(env)
		var names []string
		for name, p := range s {
			if p == nil {
				t.Errorf("%s is nil", name)
			}
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Fatalf("built-in providers %q, want %q", names, want)
		}
	}
	// Each call makes a new Set, which the caller may change.
	a, b := builtin.Platforms(nil), builtin.Platforms(nil)
	delete(a, "telegram")
	if _, ok := b["telegram"]; !ok {
		t.Fatal("two calls share one Set")
	}
}
