package storage_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// wireCounter reads what PostgreSQL's clients send, through a proxy
// (testkit.NewTapProxy), and counts the round trips that run statements:
// a simple query ('Q': BEGIN, COMMIT), or a Sync ('S') after at least one
// Execute ('E') of the extended protocol. A Sync that only ends the
// preparing of statements does not count.
type wireCounter struct {
	mu                 sync.Mutex
	begins, roundTrips int
}

// proxyPostgres starts a wireCounter in front of the server of dsn and
// returns dsn pointed at it.
func proxyPostgres(t *testing.T, dsn string) (string, *wireCounter) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	w := new(wireCounter)
	p := testkit.NewTapProxy(t, u.Host, func(from io.Reader) { _ = w.frontend(bufio.NewReader(from)) })
	u.Host = p.Addr()
	return u.String(), w
}

// frontend reads the client's side of the protocol: untyped startup
// messages (an SSL or GSS encryption request, then the startup message),
// then typed messages.
func (w *wireCounter) frontend(r *bufio.Reader) error {
	for {
		var head [8]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(head[:4])
		code := binary.BigEndian.Uint32(head[4:])
		if _, err := r.Discard(int(n) - 8); err != nil {
			return err
		}
		if code != 80877103 && code != 80877104 { // not SSLRequest, GSSENCRequest
			break
		}
	}
	executed := false
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return err
		}
		body := make([]byte, int(binary.BigEndian.Uint32(head[1:]))-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		w.mu.Lock()
		switch head[0] {
		case 'E':
			executed = true
		case 'S':
			if executed {
				w.roundTrips++
			}
			executed = false
		case 'Q':
			w.roundTrips++
			if strings.HasPrefix(strings.ToLower(string(body)), "begin") {
				w.begins++
			}
		}
		w.mu.Unlock()
	}
}

// take returns the counts so far and starts them again.
func (w *wireCounter) take() (begins, roundTrips int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	begins, roundTrips = w.begins, w.roundTrips
	w.begins, w.roundTrips = 0, 0
	return begins, roundTrips
}

// TestBatchEndIsOneRoundTrip: on PostgreSQL, what the transactions of a
// batch of the group commit defer to its end (the new requests' insert,
// the jobs' moves, the two backlog counters) goes to the database in one
// round trip, so that a batch is BEGIN, that, and COMMIT: three round
// trips, where it was one per statement (six here). A transaction that
// comes alone is a batch of one, and costs the same three.
func TestBatchEndIsOneRoundTrip(t *testing.T) {
	dsn, wire := proxyPostgres(t, testkit.PostgresURL(t))
	s := open(t, dsn)
	a, b, tg := seed(t, s, 0)
	storage.Calm(s)
	const limit = 1_000_000
	// Each transaction accepts a request (its job, its idempotency record
	// and its backlog reservation) and claims the job of an earlier one.
	var earlier []*push.Job
	round := func(n int, label string) {
		jobs := make([]*push.Job, n)
		for i := range jobs {
			jobs[i] = newJob(a, b, tg, fmt.Sprint(label, i))
		}
		race(t, n, func(i int) error {
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				rec := &push.IdempotencyRecord{AccountID: a.ID, Key: fmt.Sprint(label, "-", i), Kind: push.RequestKindSingle,
					Fingerprint: "f", JobIDs: []string{jobs[i].ID}, CreatedAt: t0}
				if err := tx.(push.RequestCreator).CreateRequest(ctx, rec, jobs[i:i+1]); err != nil {
					return err
				}
				if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, limit, limit); err != nil {
					return err
				}
				if i >= len(earlier) {
					return nil
				}
				j := *earlier[i]
				_, err := tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateQueued, To: push.StateRunning, At: t0.Add(time.Second), Job: &j})
				return err
			})
		}, func(error) bool { return false })
		earlier = jobs
	}
	// The first rounds prepare the statements on the pool's connections
	// and create the counters' rows.
	round(40, "warm")
	round(40, "warm again")
	wire.take()
	round(40, "measured")
	begins, trips := wire.take()
	if begins == 0 || begins > 40 {
		t.Fatalf("%d transactions began for 40 requests", begins)
	}
	if trips != 3*begins {
		t.Errorf("%d batches (of 40 transactions) took %d round trips, want %d: BEGIN, the batch's end, COMMIT",
			begins, trips, 3*begins)
	}
	// One more, alone.
	round(1, "alone")
	if begins, trips := wire.take(); begins != 1 || trips != 3 {
		t.Errorf("a lone transaction took %d round trips in %d transactions, want 3 in 1", trips, begins)
	}
}
