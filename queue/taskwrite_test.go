package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// storedTask is what Redis holds of a task: its hash (pending_since only
// as present or not, being a time) and where it waits.
type storedTask struct {
	Hash      map[string]string
	Pending   bool
	Scheduled float64 // its due time in the scheduled set, 0 when not there
	Queues    bool    // the namespace is in asynq's set of queues
}

// readTask reads what Redis holds of the task tid of ns.
func readTask(t *testing.T, rdb redis.UniversalClient, ns, tid string) storedTask {
	t.Helper()
	prefix := "asynq:{" + ns + "}:"
	h, err := rdb.HGetAll(ctx, prefix+"t:"+tid).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h["pending_since"]; ok {
		h["pending_since"] = "set"
	}
	s := storedTask{Hash: h}
	pending, err := rdb.LRange(ctx, prefix+"pending", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range pending {
		s.Pending = s.Pending || id == tid
	}
	if score, err := rdb.ZScore(ctx, prefix+"scheduled", tid).Result(); err == nil {
		s.Scheduled = score
	}
	if s.Queues, err = rdb.SIsMember(ctx, "asynq:queues", ns).Result(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTaskWriteIsAsynqs: a task written with its ids' reservation, in one
// script, is stored exactly as asynq's client stores the same task with
// the queue's options (its message byte for byte, its state, the list or
// set it waits in), pending or scheduled; asynq's inspector reads it back
// so; and the ids are reserved for it.
func TestTaskWriteIsAsynqs(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		inspector := asynq.NewInspectorFromRedisClient(rdb)
		due := time.Now().Add(time.Hour)
		for _, tc := range []struct {
			name  string
			typ   string
			due   time.Time
			state asynq.TaskState
		}{
			{"pending", "herald:jobs", time.Time{}, asynq.TaskStatePending},
			{"scheduled", "herald:local", due, asynq.TaskStateScheduled},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// A new queue, which adds the namespace to asynq's set
				// of queues with its first task: the set lacks it.
				q := newQueue(t, rdb, 0, ns)
				forget := func() {
					if err := rdb.SRem(ctx, "asynq:queues", ns).Err(); err != nil {
						t.Fatal(err)
					}
				}
				forget()
				ids := newIDs(3)
				payload := []byte(strings.Join(ids, ","))
				tid := "batch-" + push.NewJobID()
				ok, err := q.ReserveTask(ctx, tc.typ, tid, payload, tc.due, ids)
				if err != nil || !ok {
					t.Fatalf("ReserveTask = %v, %v; want true", ok, err)
				}
				if n := reserved(t, rdb, ns); n != int64(len(ids)) {
					t.Fatalf("%d ids reserved, want %d", n, len(ids))
				}
				ours := readTask(t, rdb, ns, tid)
				info, err := inspector.GetTaskInfo(ns, tid)
				if err != nil {
					t.Fatal(err)
				}
				got := []any{info.ID, info.Queue, info.Type, string(info.Payload), info.State, info.MaxRetry, info.Timeout, info.Retention}
				want := []any{tid, ns, tc.typ, string(payload), tc.state, 3, 5 * time.Minute, time.Hour}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("asynq reads the task as (-want +got):\n%s", diff)
				}
				if tc.state == asynq.TaskStateScheduled && info.NextProcessAt.Unix() != tc.due.Unix() {
					t.Fatalf("due at %s, want %s", info.NextProcessAt, tc.due)
				}

				// The same task, written by asynq's client.
				if err := inspector.DeleteTask(ns, tid); err != nil {
					t.Fatal(err)
				}
				forget()
				// A new client: a client, too, adds the namespace to the
				// set once.
				client := asynq.NewClientFromRedisClient(rdb)
				defer client.Close()
				opts := q.TaskOptions(tid)
				if !tc.due.IsZero() {
					opts = append(opts, asynq.ProcessAt(tc.due))
				}
				if _, err := client.EnqueueContext(ctx, asynq.NewTask(tc.typ, payload), opts...); err != nil {
					t.Fatal(err)
				}
				theirs := readTask(t, rdb, ns, tid)
				if diff := cmp.Diff(theirs, ours); diff != "" {
					t.Fatalf("stored unlike asynq's own write (-asynq +ours):\n%s", diff)
				}
				if err := inspector.DeleteTask(ns, tid); err != nil {
					t.Fatal(err)
				}
				if err := rdb.Del(ctx, "herald:{"+ns+"}:batched").Err(); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}

// TestTaskWriteAllOrNothing: when any id is reserved already, or has a
// task of its own, the script writes nothing: no task, no reservation.
func TestTaskWriteAllOrNothing(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := newQueue(t, rdb, 0, ns)
		ids := newIDs(3)
		if ok, err := q.ReserveTask(ctx, "herald:jobs", "batch-"+push.NewJobID(), []byte(strings.Join(ids[:1], ",")), time.Time{}, ids[:1]); err != nil || !ok {
			t.Fatalf("first ReserveTask = %v, %v", ok, err)
		}
		alone := push.NewJobID()
		if err := q.Enqueue(ctx, alone); err != nil {
			t.Fatal(err)
		}
		for _, clash := range [][]string{{ids[1], ids[0]}, {ids[2], alone}} {
			tid := "batch-" + push.NewJobID()
			ok, err := q.ReserveTask(ctx, "herald:jobs", tid, []byte(strings.Join(clash, ",")), time.Time{}, clash)
			if err != nil || ok {
				t.Fatalf("ReserveTask of %v = %v, %v; want false", clash, ok, err)
			}
			if n, err := rdb.Exists(ctx, "asynq:{"+ns+"}:t:"+tid).Result(); err != nil || n != 0 {
				t.Fatalf("the refused task was written: %d, %v", n, err)
			}
			if n := reserved(t, rdb, ns); n != 1 {
				t.Fatalf("%d ids reserved after a refusal, want 1", n)
			}
		}
		if n := pendingTasks(t, rdb, ns); n != 2 {
			t.Fatalf("%d tasks pending, want 2 (the first batch, the id alone)", n)
		}
	})
}

// TestAloneTaskWrite: an id's task of its own, written by the script that
// checks the id's reservation, is stored as asynq's client stores it; it
// is not written while another reservation holds the id (2) or the id has
// a task (0), and replaces a reservation found dead (1).
func TestAloneTaskWrite(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := newQueue(t, rdb, 0, ns)
		inspector := asynq.NewInspectorFromRedisClient(rdb)
		reservations := "herald:{" + ns + "}:batched"
		write := func(id, dead string, want int) {
			t.Helper()
			if n, err := q.WriteAlone(ctx, id, dead); err != nil || n != want {
				t.Fatalf("WriteAlone(%s, %q) = %d, %v; want %d", id, dead, n, err, want)
			}
		}
		id := push.NewJobID()
		write(id, "", 1)
		ours := readTask(t, rdb, ns, id)
		write(id, "", 0) // it has a task
		if err := inspector.DeleteTask(ns, id); err != nil {
			t.Fatal(err)
		}
		client := asynq.NewClientFromRedisClient(rdb)
		defer client.Close()
		if _, err := client.EnqueueContext(ctx, asynq.NewTask("herald:job", []byte(id)), q.TaskOptions(id)...); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(readTask(t, rdb, ns, id), ours); diff != "" {
			t.Fatalf("stored unlike asynq's own write (-asynq +ours):\n%s", diff)
		}

		held := push.NewJobID()
		if err := rdb.HSet(ctx, reservations, held, "batch-b@1").Err(); err != nil {
			t.Fatal(err)
		}
		write(held, "", 2)          // a reservation holds it
		write(held, "batch-a@1", 2) // another than the one found dead
		write(held, "batch-b@1", 1) // the dead one: replaced by the task
		if n, err := rdb.HExists(ctx, reservations, held).Result(); err != nil || n {
			t.Fatalf("the dead reservation is still there: %v, %v", n, err)
		}
		if info, err := inspector.GetTaskInfo(ns, held); err != nil || info.State != asynq.TaskStatePending {
			t.Fatalf("the task written: %+v, %v", info, err)
		}
	})
}
