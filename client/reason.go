package client

// Reason is the API's stable reason of a refusal: the "error" field of
// Herald's error body. A Reason is an error, so that errors.Is(err,
// client.ReasonBacklogFull) asks whether err is a refusal for that
// reason. The constants below are the reasons a program commonly acts on;
// the server has more, and a Reason of any value can be compared with
// Error.Reason.
type Reason string

// Error implements the error interface, so that a Reason can be the
// target of errors.Is.
func (r Reason) Error() string { return "herald: " + string(r) }

// The reasons of the send and job endpoints.
const (
	// ReasonInsufficientPoints: the balance cannot pay for the whole
	// request (400); nothing was charged or sent.
	ReasonInsufficientPoints Reason = "insufficient_points"
	// ReasonIdempotencyConflict: the Idempotency-Key was used for another
	// message (409). One key maps to one message.
	ReasonIdempotencyConflict Reason = "idempotency_conflict"
	// ReasonInvalidIdempotencyKey: the key is not 1 to 100 of letters,
	// digits, '_', ':' and '-' (400).
	ReasonInvalidIdempotencyKey Reason = "invalid_idempotency_key"
	// ReasonBotNotFound: no such bot in the key's account (404).
	ReasonBotNotFound Reason = "bot_not_found"
	// ReasonTargetNotFound: no such target bound to the bot (404).
	ReasonTargetNotFound Reason = "target_not_found"
	// ReasonTargetGone: the target blocked or removed the bot (400).
	ReasonTargetGone Reason = "target_gone"
	// ReasonMissingTarget: the bot's platform needs a target (400).
	ReasonMissingTarget Reason = "missing_target"
	// ReasonContentTooLong: plain text over the limit (400).
	ReasonContentTooLong Reason = "content_too_long"
	// ReasonTooManyTargets: a batch over the limit (400).
	ReasonTooManyTargets Reason = "too_many_targets"
	// ReasonNoReplyWindow: QQ takes the push only as a reply, and the
	// target has not written recently enough (400).
	ReasonNoReplyWindow Reason = "no_reply_window"
	// ReasonJobNotFound: no such job in the key's account (404).
	ReasonJobNotFound Reason = "job_not_found"
	// ReasonJobNotQueued: a cancel of a job that already started (409).
	ReasonJobNotQueued Reason = "job_not_queued"
	// ReasonJobNotUncertain: a resolve of a job that is not uncertain
	// (409).
	ReasonJobNotUncertain Reason = "job_not_uncertain"
	// ReasonBatchKey: a recovery by key of a batch send, which is
	// recovered by its items' job ids instead (400).
	ReasonBatchKey Reason = "batch_key"
	// ReasonPlatformFailed: the platform refused the message (500, with
	// the message record); Client.Send reports it as Failed, not as an
	// error.
	ReasonPlatformFailed Reason = "platform_failed"
)

// The reasons of authentication, limits and availability.
const (
	// ReasonMissingAPIKey: no key was sent (401).
	ReasonMissingAPIKey Reason = "missing_api_key"
	// ReasonInvalidAPIKey: the key is not known (401).
	ReasonInvalidAPIKey Reason = "invalid_api_key"
	// ReasonKeyRevoked: the key was revoked (403).
	ReasonKeyRevoked Reason = "key_revoked"
	// ReasonKeyExpired: the key expired (403).
	ReasonKeyExpired Reason = "key_expired"
	// ReasonAccountSuspended: the account is suspended (403).
	ReasonAccountSuspended Reason = "account_suspended"
	// ReasonRateLimited: too many requests with this key (429, with
	// Retry-After).
	ReasonRateLimited Reason = "rate_limited"
	// ReasonBacklogFull: too many queued and running jobs for the bot or
	// the service (429, with Retry-After).
	ReasonBacklogFull Reason = "backlog_full"
	// ReasonDraining: the server is shutting down (503); resubmit with
	// the same key.
	ReasonDraining Reason = "draining"
	// ReasonDatabaseUnavailable: the server cannot reach its database
	// (503); nothing was written; resubmit with the same key.
	ReasonDatabaseUnavailable Reason = "database_unavailable"
	// ReasonInternal: a server error (500); it was logged.
	ReasonInternal Reason = "internal"
)

// The reasons of the management API.
const (
	// ReasonNotSignedIn: a management request with neither a key nor a
	// session (401).
	ReasonNotSignedIn Reason = "not_signed_in"
	// ReasonWrongCredentials: a sign-in with an unknown email or a wrong
	// password (401).
	ReasonWrongCredentials Reason = "wrong_credentials"
	// ReasonSignInThrottled: too many failed sign-ins (429).
	ReasonSignInThrottled Reason = "signin_throttled"
	// ReasonOperatorOnly: a verb only operators may use (403).
	ReasonOperatorOnly Reason = "operator_only"
	// ReasonCredentialsRefused: the platform refused a bot's credentials
	// (400); nothing was saved.
	ReasonCredentialsRefused Reason = "credentials_refused"
	// ReasonPlatformUnreachable: the platform could not be asked to
	// verify credentials (503); nothing was saved.
	ReasonPlatformUnreachable Reason = "platform_unreachable"
	// ReasonUnknownField: a request body field the server does not know
	// (400).
	ReasonUnknownField Reason = "unknown_field"
)
