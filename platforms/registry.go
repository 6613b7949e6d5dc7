// Package platforms is the registry of Herald's providers: one subpackage
// per chat platform, each a push.Platform.
package platforms

import (
	"net/http"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/telegram"
	"github.com/heraldpush/herald/push"
)

// Options configure every built-in provider.
type Options struct {
	// Transport carries platform calls (default: Go's transport with
	// bounded dial and handshake times).
	Transport http.RoundTripper
	// Timeout caps one platform call (default 30 s).
	Timeout time.Duration
}

// Builtin returns every built-in provider by name, ready for
// push.Options.Platforms. Applications may add their own to the map.
func Builtin(opts Options) map[string]push.Platform {
	client := httpcall.New(httpcall.Options{Transport: opts.Transport, Timeout: opts.Timeout})
	return map[string]push.Platform{
		"telegram": telegram.New(telegram.Options{Client: client}),
	}
}
