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

// TestRelease: a released slot can be reserved again at once, under every
// limit it was claimed under; releasing more than was reserved frees no
// slot beyond the burst, and a nil Pacer paces nothing.
func TestRelease(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(func() time.Time { return now })
	chat := Limit{Key: "chat", Rate: Rate{Every: time.Second, Burst: 1}}
	bot := Limit{Key: "bot", Rate: Rate{Every: time.Second, Burst: 2}}
	if w := p.Reserve(chat, bot); w != 0 {
		t.Fatalf("first send waits %s", w)
	}
	if w := p.Reserve(chat, bot); w != time.Second {
		t.Fatalf("second send to the chat waits %s, want 1s", w)
	}
	p.Release(chat, bot) // the first send will not be made
	if w := p.Reserve(chat, bot); w != 0 {
		t.Fatalf("after the release the send waits %s", w)
	}
	for i := 0; i < 3; i++ {
		p.Release(chat, bot)
	}
	// The bot's burst of two, no more, to three other chats.
	for i, want := range []time.Duration{0, 0, time.Second} {
		c := Limit{Key: "chat" + string(rune('a'+i)), Rate: chat.Rate}
		if w := p.Reserve(c, bot); w != want {
			t.Fatalf("send %d after releasing more than was reserved waits %s, want %s", i+1, w, want)
		}
	}
	var none *Pacer
	if w := none.Reserve(chat); w != 0 {
		t.Fatalf("a nil Pacer makes a send wait %s", w)
	}
	none.Release(chat)
}
