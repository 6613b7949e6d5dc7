package push

import (
	"context"
	"time"
)

// Store persists accounts, keys, bots, targets, jobs, idempotency records,
// the points ledger and the backlog counters.
//
// Errors follow the engine's kinds: a missing row is NotFound, a unique key
// that already exists is Conflict with reason ReasonDuplicate, a failed
// compare-and-set move is Conflict with reason ReasonStateChanged, a
// refused charge is Invalid with reason "insufficient_points", a full
// backlog is TooMany with reason "backlog_full", and a store that cannot be
// reached is Unavailable.
type Store interface {
	Tx
	// Update runs fn in one read-write transaction: everything fn does
	// through tx is committed together, or nothing is when fn returns an
	// error. fn may be called again if the transaction must be retried.
	Update(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// Ping checks that the store can be reached.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// Tx is the set of operations on the store, inside or outside a
// transaction.
//
// The lists take the filter of the engine's List verb, whose Cursor the
// engine has checked (see CursorID), and return at most Limit items, those
// of the filter with an id below the cursor's, newest (highest id) first.
type Tx interface {
	CreateAccount(ctx context.Context, a *Account) error
	Account(ctx context.Context, id int64) (Account, error)
	Accounts(ctx context.Context, f AccountFilter) ([]Account, error)
	SetAccountStatus(ctx context.Context, id int64, s AccountStatus) error
	// SetPoints sets the balance and records the difference in the ledger.
	SetPoints(ctx context.Context, id int64, balance int64, at time.Time) error
	// Charge takes the sum of the entries' amounts (negative numbers) from
	// the account and records each entry, or changes nothing and returns
	// Invalid "insufficient_points" when the balance cannot pay for all.
	Charge(ctx context.Context, accountID int64, entries []LedgerEntry) error
	// Refund returns e.Amount to the account once per job: it reports false
	// and changes nothing when the job was already refunded.
	Refund(ctx context.Context, e LedgerEntry) (bool, error)
	Ledger(ctx context.Context, f LedgerFilter) ([]LedgerEntry, error)

	CreateAPIKey(ctx context.Context, k *APIKey) error
	APIKeyByHash(ctx context.Context, hash string) (APIKey, error)
	APIKey(ctx context.Context, id int64) (APIKey, error)
	APIKeys(ctx context.Context, f KeyFilter) ([]APIKey, error)
	RevokeAPIKey(ctx context.Context, id int64, at time.Time) error

	CreateBot(ctx context.Context, b *Bot) error
	Bot(ctx context.Context, id int64) (Bot, error)
	Bots(ctx context.Context, f BotFilter) ([]Bot, error)

	CreateTarget(ctx context.Context, t *Target) error
	Target(ctx context.Context, id int64) (Target, error)
	Targets(ctx context.Context, f TargetFilter) ([]Target, error)

	Idempotency(ctx context.Context, accountID int64, key string) (IdempotencyRecord, error)
	CreateIdempotency(ctx context.Context, r *IdempotencyRecord) error
	DeleteIdempotencyBefore(ctx context.Context, t time.Time) (int64, error)

	// ReserveBacklog counts n more active jobs for each bot in perBot,
	// refusing (TooMany "backlog_full", nothing counted) when a bot would
	// pass maxPerBot or the service would pass maxTotal.
	ReserveBacklog(ctx context.Context, perBot map[int64]int, maxPerBot, maxTotal int) error
	// ReleaseBacklog counts n fewer active jobs for the bot.
	ReleaseBacklog(ctx context.Context, botID int64, n int) error
	// Backlog returns the number of active jobs of a bot, or of the whole
	// service when botID is 0.
	Backlog(ctx context.Context, botID int64) (int, error)

	// CreateJobs stores new jobs and sets their MessageID.
	CreateJobs(ctx context.Context, jobs []*Job) error
	Job(ctx context.Context, id string) (Job, error)
	// Jobs returns the jobs with the given ids in the order given; a
	// missing id is NotFound.
	Jobs(ctx context.Context, ids []string) ([]Job, error)
	// MoveJob moves a job from m.From to m.To and returns it as it is now,
	// or Conflict ReasonStateChanged when the job is not in m.From.
	MoveJob(ctx context.Context, m JobMove) (Job, error)
	// FindJobs returns the ids of jobs in state s, oldest first, at most
	// limit of them; with expiredBy set, only those that expire by then.
	FindJobs(ctx context.Context, s State, expiredBy time.Time, limit int) ([]string, error)
}

// BacklogRecounter is implemented by stores that can recompute their
// backlog counters from the job rows. The engine's reconciler calls it as a
// guard against counters that drifted (rows edited by hand, a restored
// backup); it returns how many counters it corrected.
type BacklogRecounter interface {
	RecountBacklog(ctx context.Context) (int, error)
}

// AuthEpocher is implemented by stores that count the changes that can end
// an API key's validity: a key revoked, an account suspended or activated.
// The count changes in the transaction of the change. An engine whose
// store implements it caches successful authentications and trusts an
// entry only while the count is the one it was cached under, so that a
// revocation made by any process takes effect at once (or within
// Options.AuthRecheck).
type AuthEpocher interface {
	AuthEpoch(ctx context.Context) (int64, error)
}
