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
