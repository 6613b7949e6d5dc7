package builtin_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/bark"
	"github.com/heraldpush/herald/platforms/builtin"
	"github.com/heraldpush/herald/platforms/dingtalk"
	"github.com/heraldpush/herald/platforms/feishu"
	"github.com/heraldpush/herald/platforms/gotify"
	"github.com/heraldpush/herald/platforms/ntfy"
	"github.com/heraldpush/herald/platforms/pushplus"
	"github.com/heraldpush/herald/platforms/qq"
	"github.com/heraldpush/herald/platforms/serverchan"
	"github.com/heraldpush/herald/platforms/slack"
	"github.com/heraldpush/herald/platforms/telegram"
	"github.com/heraldpush/herald/platforms/wechat"
	"github.com/heraldpush/herald/platforms/wecom"
	"github.com/heraldpush/herald/push"
)

// configTypes are the bot config types of the built-in platforms, by
// name. A platform added to builtin.Platforms without an entry here fails
// TestConfigFieldsCoverConfig.
var configTypes = map[string]reflect.Type{
	"bark":       reflect.TypeFor[bark.Config](),
	"dingtalk":   reflect.TypeFor[dingtalk.Config](),
	"feishu":     reflect.TypeFor[feishu.Config](),
	"gotify":     reflect.TypeFor[gotify.Config](),
	"ntfy":       reflect.TypeFor[ntfy.Config](),
	"pushplus":   reflect.TypeFor[pushplus.Config](),
	"qq":         reflect.TypeFor[qq.Config](),
	"serverchan": reflect.TypeFor[serverchan.Config](),
	"slack":      reflect.TypeFor[slack.Config](),
	"telegram":   reflect.TypeFor[telegram.Config](),
	"wechat":     reflect.TypeFor[wechat.Config](),
	"wecom":      reflect.TypeFor[wecom.Config](),
}

// jsonFields returns the JSON names of a config struct's fields.
func jsonFields(t *testing.T, typ reflect.Type) []string {
	t.Helper()
	var names []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			t.Errorf("%s.%s has no JSON name", typ, f.Name)
			continue
		}
		names = append(names, name)
	}
	return names
}

// TestConfigFieldsCoverConfig checks that every built-in platform's
// ConfigFields, from which the console's bot form and the config table of
// its setup guide (docs/platforms/<name>.md, TestPlatformGuides) are made,
// describes exactly the fields of its Config struct, by JSON name: a field
// added to a Config without a description, or a description of a field
// that no longer exists, fails. (TestPlatformGuides checks that each
// guide's table is the description.)
func TestConfigFieldsCoverConfig(t *testing.T) {
	for name, p := range builtin.Platforms(nil) {
		t.Run(name, func(t *testing.T) {
			typ, ok := configTypes[name]
			if !ok {
				t.Fatalf("no config type for %s in configTypes: add it", name)
			}
			d, ok := p.(push.ConfigDescriber)
			if !ok {
				t.Fatalf("%s does not describe its config fields (push.ConfigDescriber)", name)
			}
			want := jsonFields(t, typ)
			var got []string
			for _, f := range d.ConfigFields() {
				got = append(got, f.Name)
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s's ConfigFields differ from its Config's JSON fields (-Config +ConfigFields):\n%s", name, diff)
			}
		})
	}
}
