// Command outside embeds Herald from a module of its own, as an
// application would: one engine with a built-in provider (ntfy, against an
// ntfy-like server the program runs itself) and a provider of its own
// (pager). It sends one message through each, checks that both were
// delivered, prints "ok" and exits 0; otherwise it says what went wrong
// and exits 1.
//
// Its test checks the program's own use of an engine (alerts) with
// package pushtest. It may use only Herald's public packages: the go
// command refuses an import of an internal package from another module.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/builtin"
	"github.com/heraldpush/herald/platforms/ntfy"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "outside:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	relay := newRelay()
	defer relay.Close()
	pg := &pager{}

	// The providers: ntfy built here on a shared Env, and the
	// application's own, gathered in a Set.
	env := platforms.NewEnv(platforms.Options{Timeout: 10 * time.Second})
	ps := platforms.Set{}
	if err := ps.Add("ntfy", ntfy.New(env)); err != nil {
		return err
	}
	if err := ps.Add("pager", pg); err != nil {
		return err
	}
	if err := ps.Add("ntfy", pg); err == nil {
		return errors.New("Set.Add gave the taken name ntfy to another provider")
	}
	// Every built-in provider, with room for one's own beside them.
	all := builtin.Platforms(env)
	if _, ok := all["telegram"]; !ok {
		return errors.New("builtin.Platforms has no telegram provider")
	}
	if err := all.Add("pager", pg); err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "herald-outside-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	jobs, err := sendEach(ctx, filepath.Join(dir, "herald.db"), ps, map[string]string{
		"ntfy":  `{"server": "` + relay.URL + `", "topic": "alerts"}`,
		"pager": `{}`,
	})
	if err != nil {
		return err
	}
	for name, j := range jobs {
		if j.State != push.StateSucceeded {
			return fmt.Errorf("the %s job is %s (%s), want succeeded", name, j.State, j.Error)
		}
	}
	if got := relay.messages(); len(got) != 1 || got[0] != "alerts: hello from ntfy" {
		return fmt.Errorf("the ntfy server received %q, want one message to alerts", got)
	}
	if got := pg.pages(); len(got) != 1 || got[0] != "hello from pager" {
		return fmt.Errorf("the pager received %q, want one message", got)
	}
	return nil
}

// sendEach is the program's use of the engine: it opens a SQLite store at
// db and an in-process queue, starts an engine with the providers ps,
// creates an account and one bot per entry of bots (platform name →
// config), sends one text message through each, and returns the jobs by
// platform name as they stood when each send returned.
func sendEach(ctx context.Context, db string, ps platforms.Set, bots map[string]string) (map[string]push.Job, error) {
	store, err := storage.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	eng, err := push.New(push.Options{Store: store, Queue: queue.NewMemory(queue.MemoryOptions{Workers: 2}), Platforms: ps})
	if err != nil {
		return nil, err
	}
	if err := eng.Start(ctx); err != nil {
		return nil, err
	}
	defer eng.Stop(ctx)
	sys := push.System()
	acct, err := eng.Accounts().Create(ctx, sys, "outside")
	if err != nil {
		return nil, err
	}
	jobs := make(map[string]push.Job)
	for name, cfg := range bots {
		bot, err := eng.Bots().Create(ctx, sys, push.Bot{AccountID: acct.ID, Platform: name, Name: name, Config: json.RawMessage(cfg)})
		if err != nil {
			return nil, fmt.Errorf("%s bot: %w", name, err)
		}
		res, err := eng.Send(ctx, push.AccountPrincipal(acct.ID), push.SendRequest{BotID: bot.ID,
			Message: push.Message{Type: push.MsgTypeText, Content: "hello from " + name}})
		if err != nil {
			return nil, fmt.Errorf("send through %s: %w", name, err)
		}
		if len(res.Jobs) != 1 {
			return nil, fmt.Errorf("send through %s made %d jobs, want 1", name, len(res.Jobs))
		}
		jobs[name] = res.Jobs[0]
	}
	return jobs, nil
}

// pager is the application's own provider. A bot has one destination (no
// targets), and a page is kept in memory.
type pager struct {
	mu  sync.Mutex
	got []string
}

var _ push.Platform = (*pager)(nil)

// Info implements push.Platform: a pager bot has no targets.
func (p *pager) Info() push.PlatformInfo { return push.PlatformInfo{} }

// ValidateConfig implements push.Platform: any JSON object will do.
func (p *pager) ValidateConfig(json.RawMessage) error { return nil }

// ValidateTarget implements push.Platform; the engine binds no targets to
// a platform without them.
func (p *pager) ValidateTarget(json.RawMessage, push.Target) error {
	return push.Errorf(push.Invalid, "platform_has_no_targets", "pager bots have no targets")
}

// ValidateMessage implements push.Platform: a page is text.
func (p *pager) ValidateMessage(m push.Message, _ push.TargetType) error {
	if m.Type != push.MsgTypeText {
		return push.Errorf(push.Invalid, "unsupported_type", "a page is plain text")
	}
	return nil
}

// Send implements push.Platform.
func (p *pager) Send(_ context.Context, d push.Delivery) (push.Receipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, d.Message.Content)
	return push.Receipt{PlatformIndex: "page-" + strconv.Itoa(len(p.got))}, nil
}

func (p *pager) pages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got...)
}

// relay is an ntfy-like server: a JSON publish (POST / with a topic and a
// message) is kept and answered 200 with the message ntfy would publish.
type relay struct {
	*httptest.Server
	mu  sync.Mutex
	got []string // "topic: message"
}

func newRelay() *relay {
	r := &relay{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.publish))
	return r
}

func (r *relay) publish(w http.ResponseWriter, req *http.Request) {
	var p struct {
		Topic   string `json:"topic"`
		Message string `json:"message"`
	}
	if req.Method != http.MethodPost || req.URL.Path != "/" || json.NewDecoder(req.Body).Decode(&p) != nil || p.Topic == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"code":40024,"http":400,"error":"invalid request: request body must be valid JSON"}`+"\n")
		return
	}
	r.mu.Lock()
	r.got = append(r.got, p.Topic+": "+p.Message)
	id := "m" + strconv.Itoa(len(r.got))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": id, "time": time.Now().Unix(), "event": "message", "topic": p.Topic, "message": p.Message})
}

func (r *relay) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}
