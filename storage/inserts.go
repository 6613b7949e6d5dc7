package storage

import (
	"github.com/heraldpush/herald/push"
)

// flushRequestsPrefix inserts the idempotency records of a batch's new
// requests (PostgreSQL), one per row of the arrays, before the statement
// that inserts their jobs.
const flushRequestsPrefix = "WITH idem AS (INSERT INTO idempotency (account_id, idem_key, kind, fingerprint, job_ids, created_ms) " +
	"SELECT * FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])) "

// insertBatch holds the new requests (an idempotency record and jobs)
// that the transactions of one batch of the group commit create, so that
// they are inserted in one statement at the batch's end instead of one
// each: accepting a send is then one statement per batch of requests, not
// per request.
//
// What a later transaction of the batch could see of them is kept exact:
// nobody but the request's own caller knows a new job's id before the
// commit, and the reads that select jobs by anything else (QueuedJobs,
// FindJobs, ListJobs, CountJobs, the backlog recount) refuse with
// errBatchUnfit while the batch holds new requests, so that the batch runs
// again with each request inserted at once. So does a record whose key
// another request took meanwhile (the insert's unique violation): there,
// the request that came second fails alone, as it would have at once.
type insertBatch struct {
	kept, pending []newRequest
}

// newRequest is one CreateRequest's rows.
type newRequest struct {
	rec  *push.IdempotencyRecord // nil: the request has no key
	jobs []*push.Job
}

func (b *insertBatch) add(rec *push.IdempotencyRecord, jobs []*push.Job) {
	b.pending = append(b.pending, newRequest{rec, jobs})
}

// holds reports whether the batch has new requests not yet inserted.
func (b *insertBatch) holds() bool { return b != nil && (len(b.kept) > 0 || len(b.pending) > 0) }

// keep and drop end the running transaction: its new requests are kept
// (it succeeded) or forgotten (it was rolled back).
func (b *insertBatch) keep() {
	if b != nil {
		b.kept = append(b.kept, b.pending...)
		b.pending = b.pending[:0]
	}
}

func (b *insertBatch) drop() {
	if b != nil {
		b.pending = b.pending[:0]
	}
}

// step returns the statement that inserts the kept requests and sets
// their jobs' MessageIDs (false: there are none). Its done fails with
// errBatchUnfit when a key was taken (by another request of the batch or
// of another node).
func (b *insertBatch) step(q queries) (step, bool) {
	if b == nil || len(b.kept) == 0 {
		return step{}, false
	}
	var (
		jobs                                []*push.Job
		accounts, created                   []int64
		keys, kinds, fingerprints, jobLists []string
	)
	for _, r := range b.kept {
		jobs = append(jobs, r.jobs...)
		if r.rec == nil {
			continue
		}
		row := idempotencyToRow(r.rec)
		accounts = append(accounts, row.AccountID)
		keys = append(keys, row.IdemKey)
		kinds = append(kinds, row.Kind)
		fingerprints = append(fingerprints, row.Fingerprint)
		jobLists = append(jobLists, row.JobIDs)
		created = append(created, row.CreatedMs)
	}
	var (
		prefix string
		lead   []any
	)
	switch {
	case len(b.kept) == 1 && b.kept[0].rec != nil:
		// One request: its record's own statement, as when it is
		// inserted at once (for one row PostgreSQL spends less on it
		// than on the arrays').
		prefix, lead = withIdempotencySQL, idempotencyArgs(b.kept[0].rec)
	case len(keys) > 0:
		prefix, lead = flushRequestsPrefix, []any{accounts, keys, kinds, fingerprints, jobLists, created}
	}
	return q.insertStep(prefix, lead, jobs, func(err error) error {
		if push.ReasonOf(err) == push.ReasonDuplicate {
			return errBatchUnfit
		}
		if err != nil {
			return err
		}
		b.kept = b.kept[:0]
		return nil
	}), true
}

// selectsJobs refuses, with errBatchUnfit, a read that selects jobs by
// other than their ids while the batch holds new requests not yet
// inserted (see insertBatch).
func (q queries) selectsJobs() error {
	if q.inserts.holds() {
		return errBatchUnfit
	}
	return nil
}
