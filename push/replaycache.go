package push

import "time"

// maxReplayJobs bounds the replay cache by the jobs its answers hold (a
// batch's answer holds up to Limits.MaxTargets jobs, each with its
// message); when it is full it starts afresh.
const maxReplayJobs = 4096

// replayCache remembers the answer to a replayed request whose jobs are
// all final. Such an answer can never change: an idempotency record is
// not altered while it lives and a final job never moves again. So the
// next replays of the key are answered from memory, without reading the
// store, until the record's retention ends (then the sweeper deletes it
// and the key may be used anew).
type replayCache struct {
	entries memo[replayKey, replayEntry]
}

type replayKey struct {
	account int64
	key     string
}

type replayEntry struct {
	rec  IdempotencyRecord
	jobs []Job
}

func (c *replayCache) init() {
	c.entries.init(maxReplayJobs, func(e replayEntry) int { return len(e.jobs) })
}

// get returns the record and final jobs of the account's key, if cached and
// the record's retention (ttl) has not ended at now.
func (c *replayCache) get(account int64, key string, now time.Time, ttl time.Duration) (IdempotencyRecord, []Job, bool) {
	e, ok := c.entries.get(replayKey{account, key})
	if !ok || !now.Before(e.rec.CreatedAt.Add(ttl)) {
		return IdempotencyRecord{}, nil, false
	}
	return e.rec, append([]Job(nil), e.jobs...), true
}

// put remembers rec's jobs when every one is final.
func (c *replayCache) put(rec IdempotencyRecord, jobs []Job) {
	for _, j := range jobs {
		if !j.State.Final() {
			return
		}
	}
	c.entries.put(replayKey{rec.AccountID, rec.Key}, replayEntry{rec: rec, jobs: append([]Job(nil), jobs...)})
}
