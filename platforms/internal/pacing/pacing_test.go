package pacing

import (
	"testing"
	"time"
)

func TestReserve(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(func() time.Time { return now })
	chat := Limit{Key: "chat", Rate: Rate{Every: time.Second, Burst: 2}}
	bot := Limit{Key: "bot", Rate: PerSecond(30)}
	for i := 0; i < 2; i++ {
		if w := p.Reserve(chat, bot); w != 0 {
			t.Fatalf("send %d in the burst waits %s", i+1, w)
		}
	}
	w := p.Reserve(chat, bot)
	if w != time.Second {
		t.Fatalf("third send waits %s, want 1s", w)
	}
	// A refused reservation claims nothing under any limit: another chat of
	// the same bot still goes at once.
	if w := p.Reserve(Limit{Key: "chat2", Rate: chat.Rate}, bot); w != 0 {
		t.Fatalf("another chat waits %s", w)
	}
	now = now.Add(w)
	if w := p.Reserve(chat, bot); w != 0 {
		t.Fatalf("after waiting, the send still waits %s", w)
	}
}

func TestPerMinute(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(func() time.Time { return now })
	l := Limit{Key: "robot", Rate: PerMinute(20)}
	for i := 0; i < 20; i++ {
		if w := p.Reserve(l); w != 0 {
			t.Fatalf("send %d waits %s", i+1, w)
		}
	}
	if w := p.Reserve(l); w != 3*time.Second {
		t.Fatalf("21st send waits %s, want 3s", w)
	}
}
