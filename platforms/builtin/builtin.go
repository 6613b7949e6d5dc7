// Package builtin builds every provider that ships with Herald, on one
// platforms.Env, by the names bots give as their platform.
package builtin

import (
	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/bark"
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
)

// Platforms returns every built-in provider built on env, by name, in a
// new Set: ready for push.Options.Platforms, for an application to add
// its own providers to, or to replace one built with options of its own
// on the same env. For a nil env, see platforms.Env.
func Platforms(env *platforms.Env) platforms.Set {
	return platforms.Set{
		// Chat platforms: bots send to bound user and group targets.
		"telegram": telegram.New(env, telegram.Options{}),
		"qq":       qq.New(env),
		"wechat":   wechat.New(env),
		"wecom":    wecom.New(env, wecom.Options{}),
		"feishu":   feishu.New(env, feishu.Options{}),
		// Push relays and workplace webhooks: no targets.
		"ntfy":       ntfy.New(env),
		"gotify":     gotify.New(env),
		"bark":       bark.New(env),
		"serverchan": serverchan.New(env),
		"pushplus":   pushplus.New(env),
		"dingtalk":   dingtalk.New(env),
		"slack":      slack.New(env),
	}
}
