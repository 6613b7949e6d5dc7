package wecom_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/heraldpush/herald/platforms"
	"github.com/heraldpush/herald/platforms/wecom"
	"github.com/heraldpush/herald/push"
)

// TestPace: WeCom's published limits, in any window of the limit's length:
// 30 a minute and 1000 an hour per member of an app, 200 a minute per app
// group chat, 20 a minute per group robot.
func TestPace(t *testing.T) {
	app := json.RawMessage(`{"corp_id":"ww01","corp_secret":"secret_0123456789","agent_id":1}`)
	robot := json.RawMessage(`{"mode":"robot","webhook_key":"693a91f6-0000-4bc4-97a0-0ec2f1fa5aaa"}`)
	cases := []struct {
		name   string
		config json.RawMessage
		target push.Target
		window time.Duration
		max    int
	}{
		{"member per minute", app, push.Target{Type: push.TargetUser, Address: "u1"}, time.Minute, 30},
		{"member per hour", app, push.Target{Type: push.TargetUser, Address: "u1"}, time.Hour, 1000},
		{"app chat per minute", app, push.Target{Type: push.TargetGroup, Address: "c1"}, time.Minute, 200},
		{"robot per minute", robot, push.Target{Type: push.TargetGroup, Address: "robot"}, time.Minute, 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			p := wecom.New(platforms.NewEnv(platforms.Options{Now: func() time.Time { return now }}), wecom.Options{})
			d := push.Delivery{Bot: push.Bot{Config: c.config}, Target: c.target}
			// Send greedily: take every slot as soon as it is offered,
			// and count the sends in the first window.
			start, sent := now, 0
			for now.Sub(start) < c.window {
				if wait := p.Pace(d); wait > 0 {
					now = now.Add(wait)
					continue
				}
				sent++
			}
			if sent > c.max || sent < c.max*3/4 {
				t.Fatalf("%d sends in %s, want at most %d and not far below", sent, c.window, c.max)
			}
		})
	}
	// Without a pacer, nothing waits.
	p := wecom.New(nil, wecom.Options{})
	for i := 0; i < 100; i++ {
		if w := p.Pace(push.Delivery{Bot: push.Bot{Config: robot}, Target: push.Target{Type: push.TargetGroup, Address: "robot"}}); w != 0 {
			t.Fatalf("unpaced wait %s", w)
		}
	}
}
