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
	// PruneJobs deletes, in a transaction of its own, at most limit of the
	// jobs that ended for good (succeeded, failed, canceled, expired) and
	// last changed before before, oldest first, with what hangs on them
	// (their replies). Their charges and refunds become one row of kind
	// LedgerSummary per account and month of the rows, so that the ledger
	// still sums to the balance. It returns how many jobs it deleted, and
	// may then give the freed space back to the file system.
	PruneJobs(ctx context.Context, before time.Time, limit int) (int, error)
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
	// CreateAccount stores a new account with the balance given.
	CreateAccount(ctx context.Context, a *Account) error
	RenameAccount(ctx context.Context, id int64, name string) error
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
	// GrantInitial records the account's initial points and adds them to
	// its balance, once: it reports false and changes nothing when the
	// account had them already.
	GrantInitial(ctx context.Context, e LedgerEntry) (bool, error)
	// Grant adds e.Amount to the account's balance (a negative amount
	// deducts) and records e, or changes nothing and returns Invalid
	// "insufficient_points" when the balance would go below zero.
	Grant(ctx context.Context, e LedgerEntry) error

	CreateAPIKey(ctx context.Context, k *APIKey) error
	APIKeyByHash(ctx context.Context, hash string) (APIKey, error)
	APIKey(ctx context.Context, id int64) (APIKey, error)
	APIKeys(ctx context.Context, f KeyFilter) ([]APIKey, error)
	RevokeAPIKey(ctx context.Context, id int64, at time.Time) error

	CreateBot(ctx context.Context, b *Bot) error
	// Bot returns a bot; a deleted one is NotFound.
	Bot(ctx context.Context, id int64) (Bot, error)
	Bots(ctx context.Context, f BotFilter) ([]Bot, error)
	// UpdateBot stores b's name (and its config when config is true). It
	// counts in the catalog epoch.
	UpdateBot(ctx context.Context, b Bot, config bool) error
	// DeleteBot marks a bot deleted and erases its config, and closes its
	// backlog counter: ReserveBacklog refuses it with NotFound from then
	// on. It counts in the catalog epoch.
	DeleteBot(ctx context.Context, id int64, at time.Time) error

	// CreateTarget binds a target; binding the address of an unbound
	// target of the bot binds that target again (its id is kept). An
	// address bound already is Conflict ReasonDuplicate.
	CreateTarget(ctx context.Context, t *Target) error
	// Target returns a target; an unbound one is NotFound.
	Target(ctx context.Context, id int64) (Target, error)
	Targets(ctx context.Context, f TargetFilter) ([]Target, error)
	// UpdateTarget stores t's name. It counts in the catalog epoch.
	UpdateTarget(ctx context.Context, t Target) error
	// UnbindTarget marks a target unbound. It counts in the catalog epoch.
	UnbindTarget(ctx context.Context, id int64, at time.Time) error

	CreateUser(ctx context.Context, u *User) error
	User(ctx context.Context, id int64) (User, error)
	UserByEmail(ctx context.Context, email string) (User, error)
	Users(ctx context.Context, f UserFilter) ([]User, error)
	// CountUsers counts the users of a role.
	CountUsers(ctx context.Context, role Role) (int, error)
	// DeleteUser deletes a user (its sessions were revoked first).
	DeleteUser(ctx context.Context, id int64) error
	SetPassword(ctx context.Context, userID int64, hash string, at time.Time) error
	SetSignedIn(ctx context.Context, userID int64, at time.Time) error

	CreateSession(ctx context.Context, s *Session) error
	Session(ctx context.Context, id int64) (Session, error)
	SessionByHash(ctx context.Context, hash string) (Session, error)
	Sessions(ctx context.Context, f SessionFilter) ([]Session, error)
	TouchSession(ctx context.Context, id int64, at time.Time) error
	// RevokeSessions revokes the sessions r names. It counts in the auth
	// epoch.
	RevokeSessions(ctx context.Context, r SessionRevoke, at time.Time) error

	CreateInvite(ctx context.Context, i *Invite) error
	Invite(ctx context.Context, id int64) (Invite, error)
	InviteByHash(ctx context.Context, hash string) (Invite, error)
	Invites(ctx context.Context, f InviteFilter) ([]Invite, error)
	// UseInvite marks an invite used by a user, or returns Conflict when
	// it was used, revoked or expired meanwhile.
	UseInvite(ctx context.Context, id, userID int64, at time.Time) error
	RevokeInvite(ctx context.Context, id int64, at time.Time) error

	CreateAudit(ctx context.Context, a *AuditEntry) error
	AuditLog(ctx context.Context, f AuditFilter) ([]AuditEntry, error)

	// TargetByAddress returns a bot's bound target of a type and address;
	// an unbound one is NotFound.
	TargetByAddress(ctx context.Context, botID int64, tt TargetType, address string) (Target, error)
	// SetPresence marks a target active or gone. It counts in the catalog
	// epoch.
	SetPresence(ctx context.Context, targetID int64, p Presence, at time.Time, note string) error
	// MoveTarget gives a target a new address. It counts in the catalog
	// epoch.
	MoveTarget(ctx context.Context, targetID int64, address string) error
	// TargetCounts counts a bot's targets, the gone ones, and (with a
	// rule) those a reply could be sent to at now.
	TargetCounts(ctx context.Context, botID int64, now time.Time, rule func(TargetType) ReplyRule, replies bool) (TargetCounts, error)

	// NoteReply records the latest message (or event) of a target, which
	// replies answer; a newer one replaces it and its count of replies.
	NoteReply(ctx context.Context, targetID int64, n ReplyNote) error
	// ClaimReply claims the next reply to a target's latest message (or,
	// failing that, its latest event) within the rule's windows at now,
	// and returns it with the state it was claimed from; a zero ReplyTo
	// means there is none.
	ClaimReply(ctx context.Context, targetID int64, now time.Time, rule ReplyRule) (ReplyTo, ReplyState, error)
	// SetJobReply and JobReply store and read the reply a job is sent as.
	SetJobReply(ctx context.Context, jobID string, r ReplyTo) error
	JobReply(ctx context.Context, jobID string) (ReplyTo, error)

	CreateBindCode(ctx context.Context, c *BindCode) error
	BindCode(ctx context.Context, id int64) (BindCode, error)
	BindCodeByHash(ctx context.Context, hash string) (BindCode, error)
	BindCodes(ctx context.Context, f BindCodeFilter) ([]BindCode, error)
	// UseBindCode spends one use of a code for the target it bound, or
	// returns Conflict when it has none left, was revoked or expired.
	UseBindCode(ctx context.Context, id, targetID int64, at time.Time) error
	RevokeBindCode(ctx context.Context, id int64, at time.Time) error

	// SeenEvent records a bot's event id and reports whether it is new.
	SeenEvent(ctx context.Context, botID int64, eventID string, at time.Time) (bool, error)
	// ForgetEventsBefore forgets the event ids seen before t.
	ForgetEventsBefore(ctx context.Context, t time.Time) (int64, error)
	// ListeningBots returns the bots (not deleted) of the platforms.
	ListeningBots(ctx context.Context, platforms []string) ([]Bot, error)
	// Receiver returns the state of a bot's receiver (NotFound: none yet).
	Receiver(ctx context.Context, botID int64) (Receiver, error)
	// AcquireReceiver takes or renews a bot's receiver lease for holder
	// until until, when it is free, ended by now, or holder's already.
	AcquireReceiver(ctx context.Context, botID int64, holder string, now, until time.Time) (bool, error)
	// ReleaseReceiver ends holder's lease of a bot's receiver.
	ReleaseReceiver(ctx context.Context, botID int64, holder string) error
	// SaveCursor stores a receiver's cursor if holder still holds it
	// (else Conflict), and clears its failures.
	SaveCursor(ctx context.Context, botID int64, holder, cursor string) error
	// SaveSetup stores what holder set up for the bot (its webhook).
	SaveSetup(ctx context.Context, botID int64, holder, setup string) error
	// ReceiverFailed counts a failure of a bot's receiver at at, with its
	// error.
	ReceiverFailed(ctx context.Context, botID int64, at time.Time, msg string) error
	// NoteReceived records when a bot last received an event.
	NoteReceived(ctx context.Context, botID int64, at time.Time) error

	Idempotency(ctx context.Context, accountID int64, key string) (IdempotencyRecord, error)
	CreateIdempotency(ctx context.Context, r *IdempotencyRecord) error
	// DeleteIdempotencyBefore deletes at most limit idempotency records
	// made before t, oldest first, and returns how many it deleted.
	DeleteIdempotencyBefore(ctx context.Context, t time.Time, limit int) (int64, error)

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
	// ParkJob hands a running job that is being sent back to the queue
	// until until (a retryable platform failure, which sent nothing),
	// noting msg as its error meanwhile; the job stays running. It returns
	// Conflict ReasonStateChanged when the job is not running or already
	// waits.
	ParkJob(ctx context.Context, id string, until, at time.Time, msg string) error
	// ResumeJob claims a running job that waits to retry until retryAt
	// for sending again, counts the attempt and returns the job. When the
	// job no longer waits so (another worker claimed it, or it moved) it
	// returns Conflict ReasonStateChanged with the job as it is.
	ResumeJob(ctx context.Context, id string, retryAt, at time.Time) (Job, error)
	// FindJobs returns the ids of jobs in state s, oldest first, at most
	// limit of them; with expiredBy set, only those that expire by then.
	FindJobs(ctx context.Context, s State, expiredBy time.Time, limit int) ([]string, error)
	// QueuedJobs returns the ids of the queued jobs of a bot, or of one of
	// its targets when targetID is not 0.
	QueuedJobs(ctx context.Context, botID, targetID int64) ([]string, error)
	// ListJobs lists jobs by the filter, newest (highest MessageID) first.
	ListJobs(ctx context.Context, f JobFilter) ([]Job, error)
	// CountJobs counts an account's jobs made at or after since by their
	// state now, from an index of jobs by account and creation time.
	CountJobs(ctx context.Context, accountID int64, since time.Time) (map[State]int, error)
	// ResolveJob records how an uncertain job was resolved, after its move.
	ResolveJob(ctx context.Context, id string, at time.Time, by, note string) error
}

// RequestCreator is implemented by transactions that write a request's
// idempotency record and its jobs together, in one round trip where the
// database allows it. CreateRequest does what CreateIdempotency (when rec
// is not nil) and then CreateJobs do, with the same errors: a key already
// taken is a Conflict with ReasonDuplicate, and nothing is written.
type RequestCreator interface {
	CreateRequest(ctx context.Context, rec *IdempotencyRecord, jobs []*Job) error
}

// BacklogRecounter is implemented by stores that can recompute their
// backlog counters from the job rows. The engine's reconciler calls it as a
// guard against counters that drifted (rows edited by hand, a restored
// backup); it returns how many counters it corrected.
type BacklogRecounter interface {
	RecountBacklog(ctx context.Context) (int, error)
}

// CatalogEpocher is implemented by stores that count the changes to bots
// and targets (renamed, new credentials, deleted, unbound). An engine
// whose store implements it remembers bots and targets and starts afresh
// within a second of a change made by any process.
type CatalogEpocher interface {
	CatalogEpoch(ctx context.Context) (int64, error)
}

// AuthEpocher is implemented by stores that count the changes that can end
// an API key's or a session's validity: a key revoked, an account
// suspended or activated, a session ended, a user removed.
// The count changes in the transaction of the change. An engine whose
// store implements it caches successful authentications and trusts an
// entry only while the count is the one it was cached under, so that a
// revocation made by any process takes effect at once (or within
// Options.AuthRecheck).
type AuthEpocher interface {
	AuthEpoch(ctx context.Context) (int64, error)
}

// TargetCounts are a bot's targets by how they can be reached.
type TargetCounts struct {
	Targets, Gone, Reachable int
}

// ReplyNote is a target's latest message or event, which replies answer.
type ReplyNote struct {
	MessageID string
	EventID   string
	At        time.Time
}

// ReplyState is what a target's replies stand on: its latest message and
// event, and how many replies each has had.
type ReplyState struct {
	MessageID  string
	MessageAt  time.Time
	MessageSeq int
	EventID    string
	EventAt    time.Time
	EventSeq   int
}
