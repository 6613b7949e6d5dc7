package transport

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// batchRequest is the body of POST /openapi/batch-send. Like the single
// sends it takes each field under the other spelling too (tagged alias).
type batchRequest struct {
	BotID        *int64  `json:"bot_id"`
	BotIDAlt     *int64  `json:"botId" alias:"bot_id"`
	TargetIDs    []int64 `json:"target_ids"`
	TargetIDsAlt []int64 `json:"targetIds" alias:"target_ids"`
	Content      *string `json:"content"`
	MsgType      *int    `json:"msg_type"`
	MsgTypeAlt   *int    `json:"msgType" alias:"msg_type"`
	ImageURL     *string `json:"image_url"`
	ImageURLAlt  *string `json:"imageUrl" alias:"image_url"`
}

// multiGroup is one bot's group of a multi-bot batch.
type multiGroup struct {
	BotID    *int64   `json:"botId"`
	BotIDAlt *int64   `json:"bot_id" alias:"botId"`
	Targets  []string `json:"targets"`
}

// multiRequest is the body of POST /openapi/v1/push/batch.
type multiRequest struct {
	Bots        []multiGroup `json:"bots"`
	Content     *string      `json:"content"`
	MsgType     *int         `json:"msgType"`
	MsgTypeAlt  *int         `json:"msg_type" alias:"msgType"`
	ImageURL    *string      `json:"imageUrl"`
	ImageURLAlt *string      `json:"image_url" alias:"imageUrl"`
}

// batchItem is one element of the batch-send results.
type batchItem struct {
	TargetID  int64  `json:"target_id"`
	Success   bool   `json:"success"`
	MessageID int64  `json:"message_id"`
	JobID     string `json:"jobId"`
	Status    string `json:"status"`
	Pending   bool   `json:"pending"`
	Uncertain bool   `json:"uncertain"`
	Error     string `json:"error,omitempty"`
}

type batchData struct {
	Total   int         `json:"total"`
	Success int         `json:"success"`
	Failed  int         `json:"failed"`
	Results []batchItem `json:"results"`
}

// multiItem is one element of the multi-bot batch results.
type multiItem struct {
	BotID     int64  `json:"botId"`
	Target    string `json:"target"`
	Status    string `json:"status"`
	MessageID int64  `json:"message_id"`
	JobID     string `json:"jobId"`
	Error     string `json:"error,omitempty"`
}

type multiData struct {
	Total          int         `json:"total"`
	SuccessCount   int         `json:"success_count"`
	FailCount      int         `json:"fail_count"`
	PendingCount   int         `json:"pending_count"`
	UncertainCount int         `json:"uncertain_count"`
	Results        []multiItem `json:"results"`
}

// tally counts a result's jobs by how the contract reads them.
type tally struct{ succeeded, failed, pending, uncertain int }

func count(jobs []push.Job) tally {
	var t tally
	for _, j := range jobs {
		switch {
		case j.State == push.StateSucceeded:
			t.succeeded++
		case j.State.Pending():
			t.pending++
		case j.State == push.StateUncertain:
			t.uncertain++
		default:
			t.failed++
		}
	}
	return t
}

func (t tally) summary() string {
	return fmt.Sprintf("%d succeeded, %d failed, %d pending, %d uncertain", t.succeeded, t.failed, t.pending, t.uncertain)
}

// status is 202 while any job is pending, else 200.
func (t tally) status() int {
	if t.pending > 0 {
		return http.StatusAccepted
	}
	return http.StatusOK
}

func (s *Server) batchSend(w http.ResponseWriter, req bunrouter.Request) error {
	var body batchRequest
	infoOf(req.Context()).words = batchWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	botID, err := either(body.BotID, "bot_id", body.BotIDAlt, "botId")
	if err != nil {
		return err
	}
	if botID == nil {
		return required("bot_id")
	}
	targets := body.TargetIDs
	switch {
	case targets == nil:
		targets = body.TargetIDsAlt
	case body.TargetIDsAlt != nil && !slices.Equal(targets, body.TargetIDsAlt):
		return push.Errorf(push.Invalid, "conflicting_fields", "target_ids and targetIds are two names of one field and give different lists: give one of them")
	}
	if targets == nil {
		return s.refuseTargets(req, *botID, push.RequestKindBatch, required("target_ids"))
	}
	msgType, err := either(body.MsgType, "msg_type", body.MsgTypeAlt, "msgType")
	if err != nil {
		return err
	}
	imageURL, err := either(body.ImageURL, "image_url", body.ImageURLAlt, "imageUrl")
	if err != nil {
		return err
	}
	res, err := s.eng.SendBatch(req.Context(), principalOf(req.Context()), push.BatchRequest{
		BotID:          *botID,
		TargetIDs:      targets,
		Message:        message(body.Content, msgType, imageURL, nil),
		IdempotencyKey: key,
	})
	if err != nil {
		return err
	}
	s.noteJobs(w, req, res)
	t := count(res.Jobs)
	data := batchData{Total: len(res.Jobs), Success: t.succeeded, Failed: t.failed, Results: make([]batchItem, len(res.Jobs))}
	for i, j := range res.Jobs {
		status := string(j.State)
		if j.State.Pending() {
			status = string(push.StateQueued) // the contract's word for every unfinished item
		}
		data.Results[i] = batchItem{
			TargetID: j.TargetID, Success: j.State == push.StateSucceeded, MessageID: j.MessageID, JobID: j.ID,
			Status: status, Pending: j.State.Pending(), Uncertain: j.State == push.StateUncertain, Error: j.Error,
		}
	}
	writeOK(w, t.status(), t.summary(), data)
	return nil
}

func (s *Server) multiSend(w http.ResponseWriter, req bunrouter.Request) error {
	var body multiRequest
	infoOf(req.Context()).words = multiWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	if body.Bots == nil {
		return required("bots")
	}
	if len(body.Bots) == 0 {
		return push.Errorf(push.Invalid, "missing_bots", "bots is empty: give at least one group of a botId and its targets")
	}
	groups := make([]push.Group, len(body.Bots))
	msgType, err := either(body.MsgType, "msgType", body.MsgTypeAlt, "msg_type")
	if err != nil {
		return err
	}
	imageURL, err := either(body.ImageURL, "imageUrl", body.ImageURLAlt, "image_url")
	if err != nil {
		return err
	}
	for i, b := range body.Bots {
		id, err := either(b.BotID, fmt.Sprintf("bots[%d].botId", i), b.BotIDAlt, fmt.Sprintf("bots[%d].bot_id", i))
		if err != nil {
			return err
		}
		if id == nil {
			return push.Errorf(push.Invalid, "missing_field", "bots[%d].botId is required", i)
		}
		if len(b.Targets) == 0 {
			return s.refuseTargets(req, *id, push.RequestKindMulti,
				push.Errorf(push.Invalid, "missing_targets", "bots[%d].targets is empty: give at least one target id", i))
		}
		groups[i].BotID = *id
		for _, t := range b.Targets {
			tid, err := parseTargetID(fmt.Sprintf("bots[%d].targets", i), t)
			if err != nil {
				return s.refuseTargets(req, *id, push.RequestKindMulti, err)
			}
			groups[i].TargetIDs = append(groups[i].TargetIDs, tid)
		}
	}
	res, err := s.eng.SendMulti(req.Context(), principalOf(req.Context()), push.MultiRequest{
		Groups:         groups,
		Message:        message(body.Content, msgType, imageURL, nil),
		IdempotencyKey: key,
	})
	if err != nil {
		return err
	}
	s.noteJobs(w, req, res)
	t := count(res.Jobs)
	data := multiData{
		Total: len(res.Jobs), SuccessCount: t.succeeded, FailCount: t.failed,
		PendingCount: t.pending, UncertainCount: t.uncertain, Results: make([]multiItem, len(res.Jobs)),
	}
	for i, j := range res.Jobs {
		status := string(j.State)
		switch {
		case j.State == push.StateSucceeded:
			status = "success"
		case j.State.Pending():
			status = "pending"
		}
		data.Results[i] = multiItem{
			BotID: j.BotID, Target: fmt.Sprint(j.TargetID), Status: status, MessageID: j.MessageID, JobID: j.ID, Error: j.Error,
		}
	}
	writeOK(w, t.status(), t.summary(), data)
	return nil
}

// noteJobs records a send's job ids (and a replay) for the request's log
// line, and marks a replayed answer with Idempotency-Replay.
func (s *Server) noteJobs(w http.ResponseWriter, req bunrouter.Request, res push.Result) {
	ids := make([]string, len(res.Jobs))
	for i, j := range res.Jobs {
		ids[i] = j.ID
	}
	infoOf(req.Context()).jobIDs = ids
	if res.Replayed {
		w.Header().Set("Idempotency-Replay", "true")
		infoOf(req.Context()).replayed = true
	}
}
