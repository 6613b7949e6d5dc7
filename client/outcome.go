package client

import (
	"fmt"
	"strings"
)

// Outcome is what became of a message, read by the contract's
// result-reading rules: only Delivered is a success; Pending and
// Uncertain are neither success nor failure.
type Outcome int

// The outcomes. The zero value, Unknown, is the outcome of a request
// whose answer was not read (see ErrUnknownResult).
const (
	// Unknown: no answer was read. The message may have been accepted:
	// recover it by its Idempotency-Key, never send it under a new one.
	Unknown Outcome = iota
	// Delivered: the platform accepted the message.
	Delivered
	// Pending: the message is queued or being sent. It is not delivered
	// yet: wait for its job (Client.Wait), do not send it again.
	Pending
	// Uncertain: the platform may have received the message (the
	// connection broke after the request to it was written, or the server
	// restarted while sending). Herald never sends it again by itself;
	// check on the platform and resolve the job. Do not resend it.
	Uncertain
	// Failed: the message was not delivered and will not be: the
	// platform refused it, or its job was canceled or expired (their
	// points were returned).
	Failed
	// Refused: the server refused the request (a 4xx, or a 429 or 503
	// after the retries): nothing was charged, queued or sent.
	Refused
)

// String returns the outcome's lower-case name.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Pending:
		return "pending"
	case Uncertain:
		return "uncertain"
	case Failed:
		return "failed"
	case Refused:
		return "refused"
	}
	return "unknown"
}

// MarshalText encodes the outcome as its name, for JSON.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText decodes an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for _, x := range []Outcome{Unknown, Delivered, Pending, Uncertain, Failed, Refused} {
		if x.String() == string(b) {
			*o = x
			return nil
		}
	}
	return fmt.Errorf("herald: %q is not an outcome", b)
}

// Settled reports whether the outcome is final as far as sending goes:
// not Pending and not Unknown. An Uncertain message is settled for the
// server (it is never sent again) though a person may resolve it later.
func (o Outcome) Settled() bool { return o != Pending && o != Unknown }

// recordOutcome reads a message record of a single send (or an item of a
// batch) by the contract's rules, in their order of precedence: uncertain
// (rule 4) before pending (rule 3: an answer of HTTP 202, inProgress, or
// pending=true), and delivered only for the status SUCCESS or succeeded
// (rule 2) of a settled record. A queued or running status is pending
// whatever the flags say (rule 5).
func recordOutcome(status string, pending, uncertain, inProgress bool) Outcome {
	s := strings.ToLower(status)
	switch {
	case uncertain || s == "uncertain":
		return Uncertain
	case pending || inProgress || s == "queued" || s == "running" || s == "pending":
		return Pending
	case status == "SUCCESS" || s == "succeeded" || s == "success":
		return Delivered
	}
	return Failed
}

// jobOutcome reads a job by its state and flags: delivered only when the
// state is succeeded, success is true and neither flag is set.
func jobOutcome(state string, success *bool, pending, uncertain bool) Outcome {
	switch {
	case uncertain || state == "uncertain":
		return Uncertain
	case pending || state == "queued" || state == "running":
		return Pending
	case state == "succeeded" && success != nil && *success:
		return Delivered
	case state == "succeeded":
		// The state says succeeded but success does not: the contract's
		// flags disagree, and a disagreement is never read as delivered.
		return Uncertain
	}
	return Failed
}
