// Package client is the Go client of a Herald server's HTTP API: the
// send and job endpoints of the contract (SPEC.md) and the management
// API. It imports only the standard library.
//
// It reads every answer by the contract's result-reading rules, so that
// a caller cannot take a queued message for a delivered one:
//
//   - Send, SendCompat, SendBatch and SendMulti give each message an
//     Outcome: Delivered, Pending (queued or sending: Wait for its job),
//     Uncertain (the platform may have it: verify, never resend), Failed
//     (not delivered) or, with an *Error, Refused (nothing was charged,
//     queued or sent).
//   - Each send carries an Idempotency-Key: the Message's, or a new one
//     (NewKey) per call. Retries use that key and the very same body.
//   - A call is retried only where that is safe: after a 429 or a 503
//     (honouring Retry-After), and after a transport error that happened
//     before any byte of the request was written (a dial error). When the
//     connection breaks after the request was written, or the context
//     ends while the server holds it, the result is unknown: the error
//     matches ErrUnknownResult and carries the key, and Recover tells
//     what became of the send. The client never sends it again under
//     another key.
//   - Wait polls a job, with a growing pause, until it settles.
//   - A refusal is an *Error with the HTTP status, the API's Reason and
//     its message; errors.Is(err, client.ReasonInsufficientPoints) asks
//     for one reason.
//
// The management API is grouped by resource, each a service with the
// same verbs (List a Page newest first, Get, Create, Update or the
// resource's own, Delete or Revoke): Bots, Targets, BindCodes, Keys,
// Jobs, Ledger, Accounts, Users, Invites, Audit and Sessions (sign-in,
// for a client acting for a person with Options.Session), with Me and
// Platforms.
//
// A Client is safe for concurrent use.
package client
