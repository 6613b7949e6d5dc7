package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// sendRun is one run of the herald send binary.
type sendRun struct {
	code           int
	stdout, stderr string
}

// runSend runs the built herald send against a server, with HERALD_URL
// and HERALD_API_KEY set, and the text on stdin when stdin is not empty.
func runSend(t *testing.T, url, key, stdin string, args ...string) sendRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, heraldBin, append([]string{"send"}, args...)...)
	cmd.Env = append(os.Environ(), "HERALD_URL="+url, "HERALD_API_KEY="+key)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := sendRun{stdout: out.String(), stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("herald send: %v", err)
	}
	return r
}

// idArg formats an id for a flag.
func idArg(n int64) string { return strconv.FormatInt(n, 10) }

// sendJSON is what herald send --json prints.
type sendJSON struct {
	Outcome string `json:"outcome"`
	Key     string `json:"key"`
	JobID   string `json:"jobId"`
	Status  string `json:"status"`
	Error   *struct {
		Status int    `json:"status"`
		Reason string `json:"reason"`
	} `json:"error"`
}

// TestSendCommandExitCodes runs herald send against a real server for
// each outcome and checks its exit code, its output, and what the
// platform received.
func TestSendCommandExitCodes(t *testing.T) {
	type want struct {
		Code    int
		Outcome string // of --json
		Reason  string
		Sent    []string // texts the platform accepted
	}
	for _, tc := range []struct {
		name    string
		opts    []testkit.Option
		prepare func(t *testing.T, h *testkit.Herald, fx testkit.Fixture) []string // the arguments after the flags
		want    want
		out     string // in the plain output (stdout, or stderr for 1, 2 and 6)
	}{
		{
			name: "delivered",
			prepare: func(*testing.T, *testkit.Herald, testkit.Fixture) []string {
				return []string{"deployed", "v42"}
			},
			want: want{Code: 0, Outcome: "delivered", Sent: []string{"deployed v42"}},
			out:  "delivered (job ",
		},
		{
			name: "pending",
			opts: []testkit.Option{testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond})},
			prepare: func(t *testing.T, h *testkit.Herald, _ testkit.Fixture) []string {
				h.Telegram.Block()
				t.Cleanup(h.Telegram.Unblock)
				return []string{"slow"}
			},
			want: want{Code: 4, Outcome: "pending"},
			out:  "pending: still being sent",
		},
		{
			name: "uncertain",
			prepare: func(_ *testing.T, h *testkit.Herald, _ testkit.Fixture) []string {
				h.Telegram.DropNext(1)
				return []string{"dropped"}
			},
			want: want{Code: 5, Outcome: "uncertain"},
			out:  "uncertain: the platform may have received it",
		},
		{
			name: "failed",
			prepare: func(_ *testing.T, h *testkit.Herald, _ testkit.Fixture) []string {
				h.Telegram.Fail(fake.TelegramFault{Status: 400, Description: "Bad Request: chat not found"})
				return []string{"refused by the platform"}
			},
			want: want{Code: 3, Outcome: "failed"},
			out:  "failed: ",
		},
		{
			name: "refused",
			prepare: func(_ *testing.T, _ *testkit.Herald, _ testkit.Fixture) []string {
				return []string{"--bot", "99", "no such bot"}
			},
			want: want{Code: 2, Outcome: "refused", Reason: "bot_not_found"},
			out:  "herald send: refused: herald: 404 bot_not_found",
		},
		{
			name: "unknown: the time ran out while the server held the send",
			prepare: func(t *testing.T, h *testkit.Herald, _ testkit.Fixture) []string {
				h.Telegram.Block()
				t.Cleanup(h.Telegram.Unblock)
				return []string{"--timeout", "500ms", "held"}
			},
			want: want{Code: 6, Outcome: "unknown"},
			out:  "Do not send it under a new key: run the same command with --key-id ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				h := testkit.New(t, tc.opts...)
				fx := h.Seed(t)
				args := []string{"--bot", idArg(fx.Bot.ID), "--target", idArg(fx.Target.ID)}
				if asJSON {
					args = append(args, "--json")
				}
				r := runSend(t, h.URL, fx.Key, "", append(args, tc.prepare(t, h, fx)...)...)
				h.Telegram.Unblock()
				if r.code != tc.want.Code {
					t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.want.Code, r.stdout, r.stderr)
				}
				if !asJSON {
					out := r.stdout
					if tc.want.Code == 2 || tc.want.Code == 6 {
						out = r.stderr
					}
					if !strings.Contains(out, tc.out) {
						t.Fatalf("output lacks %q\nstdout: %s\nstderr: %s", tc.out, r.stdout, r.stderr)
					}
					continue
				}
				var got sendJSON
				if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
					t.Fatalf("--json printed %q: %v", r.stdout, err)
				}
				reason := ""
				if got.Error != nil {
					reason = got.Error.Reason
				}
				if got.Key == "" || got.Outcome != tc.want.Outcome || reason != tc.want.Reason {
					t.Fatalf("--json: %s, want outcome %s, reason %q and the key", r.stdout, tc.want.Outcome, tc.want.Reason)
				}
				if tc.want.Sent != nil {
					var texts []string
					for _, m := range h.Telegram.Messages() {
						texts = append(texts, m.Text)
					}
					if diff := cmp.Diff(tc.want.Sent, texts); diff != "" {
						t.Fatalf("the platform received (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

// TestSendCommandResubmitAndWait: a send left pending is followed with
// --wait under the same --key-id, which sends nothing again; one whose
// answer was lost is resubmitted the same way. The platform receives each
// message once.
func TestSendCommandResubmitAndWait(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{SyncWait: 100 * time.Millisecond}))
	fx := h.Seed(t)
	flags := []string{"--bot", idArg(fx.Bot.ID), "--target", idArg(fx.Target.ID), "--key-id", "deploy-42", "--markdown"}

	h.Telegram.Block()
	r := runSend(t, h.URL, fx.Key, "**deployed** v42\n", flags...) // the text on stdin
	if r.code != 4 {
		t.Fatalf("exit %d, want 4 (pending)\n%s%s", r.code, r.stdout, r.stderr)
	}
	time.AfterFunc(300*time.Millisecond, h.Telegram.Unblock)
	r = runSend(t, h.URL, fx.Key, "**deployed** v42", append(flags, "--wait", "--json", "-")...)
	var got sendJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 || got.Outcome != "delivered" || got.Key != "deploy-42" || got.Status != "SUCCESS" {
		t.Fatalf("the same send with --wait: exit %d, %s %s (%v)", r.code, r.stdout, r.stderr, err)
	}
	msgs := h.Telegram.Messages()
	if len(msgs) != 1 || msgs[0].ParseMode != "HTML" || !strings.Contains(msgs[0].Text, "<b>deployed</b> v42") {
		t.Fatalf("the platform received %+v, want the Markdown message once, as HTML", msgs)
	}

	// --wait that runs out of time: still pending, exit 4.
	h.Telegram.Block()
	r = runSend(t, h.URL, fx.Key, "", "--bot", idArg(fx.Bot.ID), "--target", idArg(fx.Target.ID), "--wait", "--timeout", "600ms", "still slow")
	h.Telegram.Unblock()
	if r.code != 4 || !strings.Contains(r.stdout, "pending") {
		t.Fatalf("--wait past --timeout: exit %d, want 4\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestSendCommandNotSent: a command line that cannot make a send, and a
// server that cannot be reached, exit 1 and send nothing.
func TestSendCommandNotSent(t *testing.T) {
	h := testkit.New(t)
	fx := h.Seed(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/api"
	ln.Close()
	for _, tc := range []struct {
		name, url, stdin string
		args             []string
		want             string
	}{
		{"no bot", h.URL, "", []string{"hello"}, "--bot is required"},
		{"no text", h.URL, "", []string{"--bot", idArg(fx.Bot.ID)}, "no text"},
		{"markdown image", h.URL, "", []string{"--bot", "1", "--markdown", "--image", "https://example.com/a.png"}, "cannot be combined"},
		{"no server", dead, "", []string{"--bot", idArg(fx.Bot.ID), "--target", idArg(fx.Target.ID), "hello"}, "herald send: not sent: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runSend(t, tc.url, fx.Key, tc.stdin, tc.args...)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
				t.Fatalf("exit %d, want 1 with %q on stderr\nstdout: %s\nstderr: %s", r.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
	if n := h.CountJobs(t); n != 0 {
		t.Fatalf("%d jobs made, want none", n)
	}
}
