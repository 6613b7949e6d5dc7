package queue

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

// A batch's task and a local run's safety task are written in the same
// script that reserves their ids: one round trip where the reservation and
// asynq's enqueue were two, on the path of every send that is not alone.
// The script writes the task as asynq's own enqueue and schedule scripts
// do (its hash, then the pending list or the scheduled set), so asynq's
// workers, forwarder and inspector treat it as one of theirs;
// TestTaskWriteIsAsynqs holds the two forms to each other.

// reserveTaskScript reserves ids for a task and writes the task, all or
// nothing: KEYS[1] is the namespace's reservations hash, KEYS[2] the
// pending list (ARGV[4] empty) or the scheduled set, KEYS[3] the task's
// key, KEYS[4..] the asynq task keys of the ids; ARGV[1] is the
// reservation's value, ARGV[2] the task's message, ARGV[3] its id,
// ARGV[4] its due time (Unix seconds) or empty to make it pending at
// once, ARGV[5] the time now (Unix nanoseconds), ARGV[6..] the ids. It
// returns 1 when every id was free (and is now reserved, the task
// written), 0 when any was not or the task exists (and nothing was
// written).
var reserveTaskScript = redis.NewScript(`
local held = redis.call('HMGET', KEYS[1], unpack(ARGV, 6))
for _, h in ipairs(held) do
  if h then return 0 end
end
if redis.call('EXISTS', unpack(KEYS, 3)) > 0 then return 0 end
local kv = {}
for i = 6, #ARGV do
  kv[#kv + 1] = ARGV[i]
  kv[#kv + 1] = ARGV[1]
end
redis.call('HSET', KEYS[1], unpack(kv))
if ARGV[4] == '' then
  redis.call('HSET', KEYS[3], 'msg', ARGV[2], 'state', 'pending', 'pending_since', ARGV[5])
  redis.call('LPUSH', KEYS[2], ARGV[3])
else
  redis.call('HSET', KEYS[3], 'msg', ARGV[2], 'state', 'scheduled')
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
end
return 1
`)

// aloneTaskScript writes an id's task of its own, pending at once, unless
// another holds the id: KEYS[1] is the reservations hash, KEYS[2] the
// pending list, KEYS[3] the id's task key; ARGV[1] is the id, ARGV[2] the
// task's message, ARGV[3] the time now (Unix nanoseconds), ARGV[4] the
// reservation the caller found dead ("" for none), which goes. It returns
// 1 when the task was written, 2 when the id is reserved (again) by a
// batch or local run that holds it (then nothing was written), 0 when the
// id has a task already (then only the dead reservation went). Check and
// write in one script: a reservation made between them would otherwise
// run the id twice at once.
var aloneTaskScript = redis.NewScript(`
local h = redis.call('HGET', KEYS[1], ARGV[1])
if h and h ~= ARGV[4] then return 2 end
if h then redis.call('HDEL', KEYS[1], ARGV[1]) end
if redis.call('EXISTS', KEYS[3]) > 0 then return 0 end
redis.call('HSET', KEYS[3], 'msg', ARGV[2], 'state', 'pending', 'pending_since', ARGV[3])
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
`)

// allQueuesKey is asynq's set of the queues it was ever given a task for,
// which its inspector lists (and Len reads).
const allQueuesKey = "asynq:queues"

// taskMessage is the stored form of a task of this queue's options: asynq's
// TaskMessage protocol buffer (asynq v0.26's field numbers) with the
// fields asynq's client sets for the options of taskOptions (type,
// payload, id, queue, retries, timeout and retention in seconds; no
// deadline, unique key or group).
func (q *Redis) taskMessage(typ, id string, payload []byte) []byte {
	b := make([]byte, 0, 48+len(typ)+len(id)+len(q.opts.Namespace)+len(payload))
	str := func(num protowire.Number, s string) {
		if s != "" {
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	varint := func(num protowire.Number, v int64) {
		if v != 0 {
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		}
	}
	str(1, typ)
	if len(payload) > 0 {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, payload)
	}
	str(3, id)
	str(4, q.opts.Namespace)
	varint(5, int64(q.opts.MaxRetry))
	varint(8, int64(q.opts.Timeout.Seconds()))
	varint(12, int64(q.opts.Retention.Seconds()))
	return b
}

// reserveTask reserves ids for the task of type typ whose TaskID is tid
// and writes that task with payload, all or nothing: pending at once, or,
// with a due time, scheduled then. It reports false when any id is
// reserved already or has a task of its own (then nothing was written).
func (q *Redis) reserveTask(ctx context.Context, typ, tid string, payload []byte, due time.Time, ids []string) (bool, error) {
	if err := q.publishQueue(ctx); err != nil {
		return false, err
	}
	now := time.Now()
	container, at := q.pendingKey(), ""
	if !due.IsZero() {
		container, at = q.scheduledKey(), strconv.FormatInt(due.Unix(), 10)
	}
	keys := make([]string, 0, len(ids)+3)
	keys = append(keys, q.reservations(), container, q.taskKey(tid))
	args := make([]any, 0, len(ids)+5)
	args = append(args, tid+"@"+strconv.FormatInt(now.UnixMilli(), 10), q.taskMessage(typ, tid, payload), tid, at, now.UnixNano())
	for _, id := range ids {
		keys = append(keys, q.taskKey(id))
		args = append(args, id)
	}
	ok, err := reserveTaskScript.Run(ctx, q.rdb, keys, args...).Int()
	return ok == 1, err
}

// publishQueue adds the namespace to asynq's set of queues once per
// process, as asynq's client does before its first task.
func (q *Redis) publishQueue(ctx context.Context) error {
	if q.published.Load() {
		return nil
	}
	if err := q.rdb.SAdd(ctx, allQueuesKey, q.opts.Namespace).Err(); err != nil {
		return err
	}
	q.published.Store(true)
	return nil
}

// pendingKey is asynq's list of the namespace's pending tasks.
func (q *Redis) pendingKey() string { return "asynq:{" + q.opts.Namespace + "}:pending" }

// writeAlone writes id's task of its own unless a batch or local run
// holds id (other than dead, a reservation found dead): see
// aloneTaskScript, whose result it returns.
func (q *Redis) writeAlone(ctx context.Context, id, dead string) (int, error) {
	if err := q.publishQueue(ctx); err != nil {
		return 0, err
	}
	keys := []string{q.reservations(), q.pendingKey(), q.taskKey(id)}
	return aloneTaskScript.Run(ctx, q.rdb, keys, id, q.taskMessage(taskType, id, []byte(id)), time.Now().UnixNano(), dead).Int()
}
