package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
)

// providerE2E is a herald serve process, with images from loopback
// allowed, and an account and API key made with herald admin.
type providerE2E struct {
	p       *testkit.Process
	env     []string
	account string
	key     string
}

func startProviderE2E(t *testing.T) *providerE2E {
	t.Helper()
	env := []string{"HERALD_DB=" + filepath.Join(t.TempDir(), "h.db")}
	e := &providerE2E{env: env}
	e.p = testkit.StartServe(t, heraldBin, env, "--image-fetch-allow", "127.0.0.0/8")
	a := testkit.MustAdmin(t, heraldBin, env, "account", "create", "--name", "acme")
	e.account = fmt.Sprint(a["id"])
	e.key = testkit.MustAdmin(t, heraldBin, env, "key", "create", "--account", e.account)["key"].(string)
	return e
}

// bot creates a bot with herald admin and returns its id.
func (e *providerE2E) bot(t *testing.T, platform, config string) int {
	t.Helper()
	b := testkit.MustAdmin(t, heraldBin, e.env, "bot", "create", "--account", e.account, "--platform", platform, "--name", platform, "--config", config)
	id, _ := strconv.Atoi(fmt.Sprint(b["id"]))
	return id
}

// bind binds a target with herald admin and returns its id.
func (e *providerE2E) bind(t *testing.T, bot int, tt, address string) string {
	t.Helper()
	r := testkit.MustAdmin(t, heraldBin, e.env, "target", "bind", "--bot", strconv.Itoa(bot), "--type", tt, "--address", address)
	return fmt.Sprint(r["id"])
}

// send sends through POST /openapi/v1/push/private.
func (e *providerE2E) send(t *testing.T, body map[string]any) testkit.Response {
	t.Helper()
	return testkit.Call(t, e.p.URL, "POST", "/openapi/v1/push/private", e.key, body)
}

// push sends through POST /openapi/v1/push/private and returns the
// answer's status, body and data.
func (e *providerE2E) push(t *testing.T, body map[string]any) (int, map[string]any, map[string]any) {
	t.Helper()
	r := e.send(t, body)
	m := r.JSON()
	data, _ := m["data"].(map[string]any)
	return r.Status, m, data
}

// noSecrets fails the test if the process printed any of the secrets.
func (e *providerE2E) noSecrets(t *testing.T, secrets ...string) {
	t.Helper()
	out := e.p.Output()
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Fatalf("herald serve printed a credential")
		}
	}
}
