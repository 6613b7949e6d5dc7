package platforms_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/ntfy"
	"github.com/heraldpush/herald/platforms/telegram"
	"github.com/heraldpush/herald/push"
)

// Providers built on one Env share its pacer: what one spends of a
// platform's limit, the others cannot. Providers on another Env, or on
// none, do not.
func TestEnvSharesPacer(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	env := platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }})
	one, two := ntfy.New(env), ntfy.New(env)
	apart := ntfy.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}))
	unpaced := ntfy.New(nil)
	d := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"topic":"alerts"}`)}}
	for i := 0; i < 60; i++ { // ntfy's burst
		if w := one.Pace(d); w != 0 {
			t.Fatalf("send %d of the burst waits %s", i+1, w)
		}
	}
	if w := two.Pace(d); w == 0 {
		t.Error("a provider on the same Env does not wait once the burst is spent")
	}
	if w := apart.Pace(d); w != 0 {
		t.Errorf("a provider on another Env waits %s", w)
	}
	for i := 0; i < 100; i++ {
		if w := unpaced.Pace(d); w != 0 {
			t.Fatalf("a provider on a nil Env waits %s", w)
		}
	}
}

// roundTripper answers every request as ntfy would and remembers it.
type roundTripper struct {
	mu  sync.Mutex
	got []string
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	rt.got = append(rt.got, req.Method+" "+req.URL.String())
	rt.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"id":"m1","event":"message","topic":"alerts","message":"hi"}`)), Request: req}, nil
}

// An Env's transport carries its providers' calls.
func TestEnvTransport(t *testing.T) {
	rt := &roundTripper{}
	p := ntfy.New(platforms.NewEnv(platforms.Options{Transport: rt, NoPacing: true}))
	d := push.Delivery{Bot: push.Bot{Config: json.RawMessage(`{"topic":"alerts","server":"https://ntfy.example.com"}`)},
		Message: push.Message{Type: push.MsgTypeText, Content: "hi"}}
	receipt, err := p.Send(context.Background(), d)
	if err != nil || receipt.PlatformIndex != "m1" {
		t.Fatalf("Send: %+v, %v; want the message m1", receipt, err)
	}
	if len(rt.got) != 1 || rt.got[0] != "POST https://ntfy.example.com/" {
		t.Fatalf("the transport carried %q, want one POST to the server", rt.got)
	}
}

func TestSetAdd(t *testing.T) {
	tg := telegram.New(nil, telegram.Options{})
	s := platforms.Set{}
	if err := s.Add("telegram", tg); err != nil {
		t.Fatalf("Add to an empty Set: %v", err)
	}
	for _, c := range []struct {
		name string
		p    push.Platform
		want string
	}{
		{"telegram", ntfy.New(nil), `the name "telegram" is taken by a *telegram.Provider`},
		{"", ntfy.New(nil), "a provider needs a name"},
		{"ntfy", nil, `the provider for "ntfy" is nil`},
	} {
		if err := s.Add(c.name, c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%q, %T): %v, want an error saying %q", c.name, c.p, err, c.want)
		}
	}
	if len(s) != 1 || s["telegram"] != tg {
		t.Fatalf("after the refusals the Set is %v, want telegram alone", s)
	}
	// A Set is what push.Options.Platforms takes.
	_ = push.Options{Platforms: s}
}
