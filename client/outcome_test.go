package client

import (
	"testing"
	"time"
)

// TestRecordOutcome reads message records as the contract's rules say,
// including the combinations a server should never give: a disagreement
// is never read as delivered.
func TestRecordOutcome(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		status                       string
		pending, uncertain, accepted bool
		want                         Outcome
	}{
		{"SUCCESS", "SUCCESS", false, false, false, Delivered},
		{"succeeded", "succeeded", false, false, false, Delivered},
		{"multi item success", "success", false, false, false, Delivered},
		{"202 is pending whatever the status", "SUCCESS", false, false, true, Pending},
		{"pending flag", "SUCCESS", true, false, false, Pending},
		{"uncertain flag wins over pending", "RUNNING", true, true, true, Uncertain},
		{"uncertain flag with SUCCESS", "SUCCESS", false, true, false, Uncertain},
		{"UNCERTAIN status", "UNCERTAIN", false, false, true, Uncertain},
		{"queued item is never delivered", "queued", false, false, false, Pending},
		{"RUNNING", "RUNNING", false, false, false, Pending},
		{"FAILED", "FAILED", false, false, false, Failed},
		{"CANCELED", "CANCELED", false, false, false, Failed},
		{"EXPIRED", "EXPIRED", false, false, false, Failed},
		{"an unknown status is not a success", "OK", false, false, false, Failed},
		{"no status", "", false, false, false, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := recordOutcome(tc.status, tc.pending, tc.uncertain, tc.accepted); got != tc.want {
				t.Fatalf("recordOutcome(%q, pending %v, uncertain %v, 202 %v) = %v, want %v", tc.status, tc.pending, tc.uncertain, tc.accepted, got, tc.want)
			}
		})
	}
}

// TestJobOutcome reads jobs: delivered only when the state is succeeded
// and success is true.
func TestJobOutcome(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		state              string
		success            *bool
		pending, uncertain bool
		want               Outcome
	}{
		{"succeeded", &yes, false, false, Delivered},
		{"succeeded", nil, false, false, Uncertain},
		{"succeeded", &no, false, false, Uncertain},
		{"succeeded", &yes, true, false, Pending},
		{"queued", nil, true, false, Pending},
		{"running", nil, false, false, Pending},
		{"uncertain", &no, false, true, Uncertain},
		{"failed", &no, false, false, Failed},
		{"canceled", &no, false, false, Failed},
		{"expired", &no, false, false, Failed},
	} {
		if got := jobOutcome(tc.state, tc.success, tc.pending, tc.uncertain); got != tc.want {
			t.Errorf("jobOutcome(%s, success %v, pending %v, uncertain %v) = %v, want %v", tc.state, tc.success, tc.pending, tc.uncertain, got, tc.want)
		}
	}
}

// TestBatchItemOutcome reads items of /openapi/batch-send, the
// contract's bare {target_id, success, message_id} included.
func TestBatchItemOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		item batchItem
		want Outcome
	}{
		{"bare success", batchItem{Success: true}, Delivered},
		{"bare failure", batchItem{}, Failed},
		{"bare queued item", batchItem{Status: "queued", JobID: "j"}, Pending},
		{"succeeded", batchItem{Success: true, Status: "succeeded"}, Delivered},
		{"succeeded without success", batchItem{Status: "succeeded"}, Uncertain},
		{"success with failed status", batchItem{Success: true, Status: "failed"}, Uncertain},
		{"pending flag", batchItem{Status: "queued", Pending: true}, Pending},
		{"uncertain", batchItem{Status: "uncertain", Uncertain: true}, Uncertain},
		{"failed", batchItem{Status: "failed"}, Failed},
	} {
		if got := tc.item.outcome(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRetryAfter reads both forms of Retry-After.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"5":                             5 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Wed, 25 Nov 2026 09:00:30 GMT": 30 * time.Second,
		"Wed, 25 Nov 2026 08:00:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestOutcomeText round-trips the outcomes' names.
func TestOutcomeText(t *testing.T) {
	for _, o := range []Outcome{Unknown, Delivered, Pending, Uncertain, Failed, Refused} {
		b, _ := o.MarshalText()
		var back Outcome
		if err := back.UnmarshalText(b); err != nil || back != o {
			t.Errorf("%v: %s read back as %v, %v", o, b, back, err)
		}
	}
	var o Outcome
	if err := o.UnmarshalText([]byte("sent")); err == nil {
		t.Error("an unknown name was read")
	}
}
