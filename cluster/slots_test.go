package cluster_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/cluster"
	"github.com/heraldpush/herald/internal/testkit"
)

// TestSendSlotsShared: two nodes share a bot's cap; a holder's slot frees
// itself when its lease ends; with Redis away a node counts on its own.
func TestSendSlotsShared(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		ns := testkit.RandomName("s_")
		a := cluster.NewSendSlots(node(t, addr), cluster.SendSlotsOptions{Namespace: ns})
		b := cluster.NewSendSlots(node(t, addr), cluster.SendSlotsOptions{Namespace: ns})
		lease := time.Minute
		got := []bool{
			a.Acquire(ctx, 1, "j1", 2, lease),
			b.Acquire(ctx, 1, "j2", 2, lease),
			a.Acquire(ctx, 1, "j3", 2, lease), // the cap, across nodes
			b.Acquire(ctx, 1, "j1", 2, lease), // a holder renews
			b.Acquire(ctx, 2, "j4", 2, lease), // another bot
		}
		b.Release(ctx, 1, "j2")
		got = append(got, a.Acquire(ctx, 1, "j3", 2, lease))
		if diff := cmp.Diff([]bool{true, true, false, true, true, true}, got); diff != "" {
			t.Fatalf("acquired (-want +got):\n%s", diff)
		}
		short := cluster.NewSendSlots(node(t, addr), cluster.SendSlotsOptions{Namespace: testkit.RandomName("s_")})
		if !short.Acquire(ctx, 1, "dead", 1, 100*time.Millisecond) || short.Acquire(ctx, 1, "next", 1, time.Minute) {
			t.Fatal("a cap of 1 did not hold")
		}
		time.Sleep(150 * time.Millisecond)
		if !short.Acquire(ctx, 1, "next", 1, time.Minute) {
			t.Fatal("the slot of a holder whose lease ended was not freed")
		}
	})
}

// TestSendSlotsFallBack: with Redis away, a node caps a bot on its own.
func TestSendSlotsFallBack(t *testing.T) {
	eachRedis(t, func(t *testing.T, addr string) {
		proxy := testkit.NewProxy(t, addr)
		s := cluster.NewSendSlots(node(t, proxy.Addr()), cluster.SendSlotsOptions{Namespace: testkit.RandomName("s_"), Timeout: 200 * time.Millisecond})
		proxy.Cut()
		got := []bool{s.Acquire(ctx, 1, "j1", 1, time.Minute), s.Acquire(ctx, 1, "j2", 1, time.Minute)}
		s.Release(ctx, 1, "j1")
		got = append(got, s.Acquire(ctx, 1, "j2", 1, time.Minute))
		if diff := cmp.Diff([]bool{true, false, true}, got); diff != "" {
			t.Fatalf("acquired without Redis (-want +got):\n%s", diff)
		}
	})
}
