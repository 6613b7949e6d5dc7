// Package platforms is what Herald's providers are built on, and where an
// application gathers the providers its engine uses.
//
// Providers built together share one HTTP client policy (transport,
// timeout, pool of connections), one cache of access tokens, one guarded
// image fetcher and one pacer, so that a token fetched or a rate limit
// used up by one provider counts for every provider that calls the same
// platform with the same credentials. An Env carries them: build one with
// NewEnv and give it to each provider's New, as in
//
//	env := platforms.NewEnv(platforms.Options{Timeout: 10 * time.Second})
//	ps := builtin.Platforms(env) // every provider that ships with Herald
//	ps["telegram"] = telegram.New(env, telegram.Options{APIBase: "http://bot-api:8081"})
//	if err := ps.Add("pager", pager.New()); err != nil { … } // an application's own push.Platform
//	eng, err := push.New(push.Options{Store: store, Queue: q, Platforms: ps})
//
// An Env is opaque: the helpers behind it (the HTTP client, the token
// cache, the image fetcher, the pacer) are internal to Herald and may
// change without breaking a caller. It lives here, not beside the list of
// built-in providers (package builtin), because the providers import it
// and that list imports the providers.
//
// A Set gathers providers by name, built-in ones and any other
// push.Platform, for push.Options.Platforms.
package platforms

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/shared"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
)

// Options configure an Env.
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

// Env carries what the providers built on it share: the HTTP client
// policy, the token cache, the guarded image fetcher and the pacer. Build
// one with NewEnv; it is safe for concurrent use.
//
// A nil *Env (or a zero Env) gives a provider its own HTTP client, token
// cache and image fetcher with their defaults, and no pacing: enough for a
// test, while an application builds its providers on one Env from NewEnv.
type Env struct {
	deps shared.Deps
}

// NewEnv returns an Env configured by opts.
func NewEnv(opts Options) *Env {
	d := shared.Deps{
		Client: httpcall.New(httpcall.Options{Transport: opts.Transport, Timeout: opts.Timeout}),
		Tokens: tokencache.New(tokencache.Options{Now: opts.Now}),
		Images: imagefetch.New(imagefetch.Options{Allow: opts.ImageAllow, MaxBytes: opts.ImageMaxBytes, UserAgent: httpcall.UserAgent}),
	}
	if !opts.NoPacing {
		d.Pacer = pacing.New(opts.Now)
	}
	return &Env{deps: d}
}

// The providers read an Env through package shared: its fields stay
// unexported so that no internal type is part of this package's API, and
// Go has no other way to let the providers' packages, but no one else,
// read them.
func init() {
	shared.SetEnvReader(func(env any) shared.Deps {
		e, ok := env.(*Env)
		if !ok {
			panic("platforms: a provider was given something other than a *platforms.Env")
		}
		if e == nil {
			return shared.Deps{}
		}
		return e.deps
	})
}
