package shared

import (
	"testing"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
)

func TestWithDefaults(t *testing.T) {
	d := Deps{}.WithDefaults()
	if d.Client == nil || d.Tokens == nil || d.Images == nil || d.Pacer != nil {
		t.Fatalf("defaults %+v: want a client, a token cache and an image fetcher, and no pacer", d)
	}
	own := httpcall.New(httpcall.Options{})
	if got := (Deps{Client: own}).WithDefaults().Client; got != own {
		t.Fatal("a given client was replaced")
	}
}
