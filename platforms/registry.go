// Package platforms is the registry of Herald's providers: one subpackage
// per chat platform, each a push.Platform, all built on one set of shared
// rules (HTTP client policy, token cache, guarded image fetcher, pacing).
package platforms

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/heraldpush/herald/platforms/bark"
	"github.com/heraldpush/herald/platforms/dingtalk"
	"github.com/heraldpush/herald/platforms/feishu"
	"github.com/heraldpush/herald/platforms/gotify"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
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

// Options configure every built-in provider.
type Options struct {
	// Transport carries platform calls (default: Go's transport with
	// bounded dial and handshake times).
	Transport http.RoundTripper
	// Timeout caps one platform call (default 30 s).
	Timeout time.Duration
	// ImageAllow lists networks that image downloads may reach although
	// they are loopback or private (tests, private deployments). By default
	// only public addresses are fetched from.
	ImageAllow []netip.Prefix
	// ImageMaxBytes caps downloaded images (default 10 MiB).
	ImageMaxBytes int64
	// NoPacing turns off the spacing of sends by platform limits (tests).
	NoPacing bool
	// Now tells the time to the token cache and the pacer (default
	// time.Now).
	Now func() time.Time
}

// Deps builds the shared dependencies of the providers.
func deps(opts Options) shared.Deps {
	d := shared.Deps{
		Client: httpcall.New(httpcall.Options{Transport: opts.Transport, Timeout: opts.Timeout}),
		Tokens: tokencache.New(tokencache.Options{Now: opts.Now}),
		Images: imagefetch.New(imagefetch.Options{Allow: opts.ImageAllow, MaxBytes: opts.ImageMaxBytes, UserAgent: httpcall.UserAgent}),
	}
	if !opts.NoPacing {
		d.Pacer = pacing.New(opts.Now)
	}
	return d
}

// Builtin returns every built-in provider by name, ready for
// push.Options.Platforms. Applications may add their own to the map.
func Builtin(opts Options) map[string]push.Platform {
	d := deps(opts)
	return map[string]push.Platform{
		// Chat platforms: bots send to bound user and group targets.
		"telegram": telegram.New(d, telegram.Options{}),
		"qq":       qq.New(d),
		"wechat":   wechat.New(d),
		"wecom":    wecom.New(d, wecom.Options{}),
		"feishu":   feishu.New(d, feishu.Options{}),
		// Push relays and workplace webhooks: no targets.
		"ntfy":       ntfy.New(d),
		"gotify":     gotify.New(d),
		"bark":       bark.New(d),
		"serverchan": serverchan.New(d),
		"pushplus":   pushplus.New(d),
		"dingtalk":   dingtalk.New(d),
		"slack":      slack.New(d),
	}
}
