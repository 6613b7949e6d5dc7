// Package shared holds what every provider shares, built once by
// platforms.NewEnv: the HTTP client policy, the token cache, the guarded
// image fetcher and the pacer.
package shared

import (
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/pacing"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
)

// Deps are the shared dependencies of the providers.
type Deps struct {
	Client *httpcall.Client
	Tokens *tokencache.Cache
	Images *imagefetch.Fetcher
	// Pacer spaces out sends per platform limits; nil turns pacing off.
	Pacer *pacing.Pacer
}

// WithDefaults returns d with a default for every dependency left nil
// but the pacer (a provider built on a nil platforms.Env, as in tests).
func (d Deps) WithDefaults() Deps {
	if d.Client == nil {
		d.Client = httpcall.New(httpcall.Options{})
	}
	if d.Tokens == nil {
		d.Tokens = tokencache.New(tokencache.Options{})
	}
	if d.Images == nil {
		d.Images = imagefetch.New(imagefetch.Options{UserAgent: httpcall.UserAgent})
	}
	return d
}

// readEnv reads the Deps a *platforms.Env carries; see SetEnvReader.
var readEnv func(env any) Deps

// SetEnvReader is called once, by package platforms as it starts, with the
// function that reads the Deps a *platforms.Env carries. That public type
// keeps them in unexported fields (no internal type is part of its API),
// and this package cannot import it, which imports this one: the reader
// is handed over instead.
func SetEnvReader(read func(env any) Deps) { readEnv = read }

// FromEnv returns the Deps that env, the *platforms.Env given to a
// provider's New, carries, WithDefaults (all defaults when env is nil).
func FromEnv(env any) Deps {
	if readEnv == nil {
		// Unreachable: whoever holds a *platforms.Env has imported
		// package platforms, whose start set the reader.
		panic("shared: FromEnv before package platforms set the reader")
	}
	return readEnv(env).WithDefaults()
}
