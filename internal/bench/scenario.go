package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Scenario names.
const (
	// Single: 4.1 text sends, each with its own Idempotency-Key, answered
	// 200 after delivery.
	Single = "single"
	// Batch: 4.3 batch sends to --targets targets of one bot.
	Batch = "batch"
	// Multi: 4.4 multi-bot batch sends, the targets split between two bots.
	Multi = "multi"
	// Replay: one single send repeated with its Idempotency-Key: every
	// request after the first is answered from the idempotency record.
	Replay = "replay"
	// Slow: single sends to a platform that answers after
	// --platform-latency (100 ms by default): how far the workers fan out.
	Slow = "slow"
	// Accept: single sends to a platform slower than the synchronous wait:
	// each is answered 202 with its jobId.
	Accept = "accept"
)

// Scenarios lists the scenario names.
func Scenarios() []string { return []string{Single, Batch, Multi, Replay, Slow, Accept} }

// target is what the load addresses: an account's key, its bots and their
// targets.
type target struct {
	key  string
	bots []botTargets
}

type botTargets struct {
	id      int64
	targets []int64
}

// scenario builds the requests of a run and judges the answers.
type scenario struct {
	name   string
	path   string
	want   int // the status of a good answer
	runID  string
	target target
	n      int // targets per batch request
	// replayBody is the body every replay repeats (under the key runID-replay).
	replayBody []byte
}

// request is one request to send.
type request struct {
	path string
	body []byte
	key  string // Idempotency-Key
}

// next returns the seq-th request of worker w.
func (s *scenario) next(w int, seq uint64) request {
	key := s.runID + "-" + strconv.Itoa(w) + "-" + strconv.FormatUint(seq, 10)
	content := "bench " + key
	switch s.name {
	case Batch:
		b := s.target.bots[0]
		ids := make([]string, 0, s.n)
		for i := 0; i < s.n && i < len(b.targets); i++ {
			ids = append(ids, strconv.FormatInt(b.targets[i], 10))
		}
		body := fmt.Sprintf(`{"bot_id":%d,"target_ids":[%s],"content":%q}`, b.id, strings.Join(ids, ","), content)
		return request{path: s.path, body: []byte(body), key: key}
	case Multi:
		var groups []string
		for _, b := range s.target.bots {
			ids := make([]string, len(b.targets))
			for i, t := range b.targets {
				ids[i] = strconv.Quote(strconv.FormatInt(t, 10))
			}
			groups = append(groups, fmt.Sprintf(`{"botId":%d,"targets":[%s]}`, b.id, strings.Join(ids, ",")))
		}
		body := fmt.Sprintf(`{"bots":[%s],"content":%q}`, strings.Join(groups, ","), content)
		return request{path: s.path, body: []byte(body), key: key}
	case Replay:
		return request{path: s.path, body: s.replayBody, key: s.runID + "-replay"}
	default:
		b := s.target.bots[0]
		// One chat per request in turn, so that no chat sees a burst.
		t := b.targets[int((seq*uint64(7919)+uint64(w))%uint64(len(b.targets)))]
		body := `{"botId":` + strconv.FormatInt(b.id, 10) + `,"target":"` + strconv.FormatInt(t, 10) + `","content":"` + content + `"}`
		return request{path: s.path, body: []byte(body), key: key}
	}
}

// answer is the part of a send's answer the benchmark reads.
type answer struct {
	Code int `json:"code"`
	Data struct {
		Status       string `json:"status"`
		Pending      bool   `json:"pending"`
		Success      int    `json:"success"`
		SuccessCount int    `json:"success_count"`
		Total        int    `json:"total"`
	} `json:"data"`
}

// judge reads an answer: whether it is the scenario's good answer, and
// how many deliveries it reports.
func (s *scenario) judge(status int, body []byte) (ok bool, delivered int) {
	if status != s.want {
		return false, 0
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil || a.Code != 0 {
		return false, 0
	}
	switch s.name {
	case Batch:
		return a.Data.Success == a.Data.Total && a.Data.Total > 0, a.Data.Success
	case Multi:
		return a.Data.SuccessCount == a.Data.Total && a.Data.Total > 0, a.Data.SuccessCount
	case Accept:
		return a.Data.Pending, 0
	case Replay:
		return a.Data.Status == "SUCCESS", 0
	default:
		if a.Data.Status == "SUCCESS" {
			return true, 1
		}
		return false, 0
	}
}

func newScenario(name, runID string, t target, n int) (*scenario, error) {
	s := &scenario{name: name, runID: runID, target: t, n: n, want: http.StatusOK}
	if len(t.bots) == 0 || len(t.bots[0].targets) == 0 {
		return nil, fmt.Errorf("scenario %s needs a bot with at least one target", name)
	}
	switch name {
	case Single, Slow, Replay:
		s.path = "/openapi/v1/push/private"
	case Accept:
		s.path = "/openapi/v1/push/private"
		s.want = http.StatusAccepted
	case Batch:
		s.path = "/openapi/batch-send"
	case Multi:
		s.path = "/openapi/v1/push/batch"
	default:
		return nil, fmt.Errorf("unknown scenario %q: use one of %s", name, strings.Join(Scenarios(), ", "))
	}
	if name == Replay {
		b := s.target.bots[0]
		s.replayBody = []byte(`{"botId":` + strconv.FormatInt(b.id, 10) + `,"target":"` + strconv.FormatInt(b.targets[0], 10) + `","content":"bench replay"}`)
	}
	return s, nil
}
