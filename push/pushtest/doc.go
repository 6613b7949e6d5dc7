// Package pushtest lets a program that embeds package push test its own
// code against a real engine, without a platform to reach and without a
// push.Platform of its own to write, as net/http/httptest does for HTTP.
//
// New starts a Harness for one test: a push.Engine on a private in-memory
// SQLite database (SQLite's ":memory:", on one connection: nothing is
// written to disk and nothing is shared between tests) and the in-process
// queue (package storage and package queue, as a program embedding push
// assembles them), whose one platform is a Platform that records what it
// receives. The Harness stops when the
// test ends.
//
//	func TestDeployAlert(t *testing.T) {
//		h := pushtest.New(t)
//		f := h.Seed(t) // an account with 100 points, a bot, a user target
//		alerts := myservice.NewAlerts(h.Engine, f.Account.ID, f.Bot.ID, f.Target.ID)
//
//		if err := alerts.Deployed(ctx, "v42"); err != nil {
//			t.Fatal(err)
//		}
//		sent := h.WaitSent(t, 1)
//		if sent[0].Content != "**deployed** v42" || sent[0].Type != push.MsgTypeMarkdown {
//			t.Errorf("sent %+v", sent[0])
//		}
//	}
//
// Platform.Fail and Platform.Delay make the platform refuse a message
// (the job fails), fail without receiving it (the job is tried again),
// lose its answer (the job becomes uncertain), or answer late, so that
// the code under test can be checked on each outcome a real platform
// gives. WithPlatformNames registers the Platform under the names the
// code under test creates its bots on ("telegram", …), and
// WithEngineOptions sets the engine's limits or points policy.
//
// Open and Harness.Setup do what New and Seed do for code without a
// testing.TB (TestMain, an example), returning errors instead.
//
// A Platform can also stand in for a real one in an engine the test
// assembles itself (on PostgreSQL, say): it is an ordinary push.Platform.
package pushtest
