// Package shared holds what every provider shares, built once by the
// platforms registry: the HTTP client policy, the token cache, the guarded
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
// but the pacer (a provider built outside the registry, as in tests).
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
