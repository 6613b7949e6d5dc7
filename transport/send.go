package transport

import (
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// privateRequest is the body of POST /openapi/v1/push/private.
type privateRequest struct {
	BotID      *int64  `json:"botId"`
	Target     *string `json:"target"`
	Content    *string `json:"content"`
	MsgType    *int    `json:"msgType"`
	ImageURL   *string `json:"imageUrl"`
	TargetType *string `json:"targetType"`
	IsWakeup   *bool   `json:"isWakeup"`
}

// compatRequest is the body of POST /openapi/send.
type compatRequest struct {
	BotID    *int64  `json:"bot_id"`
	TargetID *int64  `json:"target_id"`
	Content  *string `json:"content"`
	MsgType  *int    `json:"msg_type"`
	ImageURL *string `json:"image_url"`
}

func (s *Server) sendPrivate(w http.ResponseWriter, req bunrouter.Request) error {
	var body privateRequest
	infoOf(req.Context()).words = privateWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	if body.BotID == nil {
		return required("botId")
	}
	r := push.SendRequest{
		BotID:          *body.BotID,
		Message:        message(body.Content, body.MsgType, body.ImageURL, body.IsWakeup),
		IdempotencyKey: key,
	}
	// An omitted, null or empty target addresses a bot's one destination
	// on platforms without targets.
	if body.Target != nil && *body.Target != "" {
		if r.TargetID, err = parseTargetID("target", *body.Target); err != nil {
			return s.refuseTargets(req, r.BotID, push.RequestKindSingle, err)
		}
	}
	if body.TargetType != nil {
		r.TargetType = push.TargetType(*body.TargetType)
		if !r.TargetType.Valid() {
			return push.Errorf(push.Invalid, "invalid_target_type", "targetType %q is not supported: use \"user\" or \"group\", or leave it out", truncate(*body.TargetType, 40))
		}
	}
	return s.single(w, req, r)
}

func (s *Server) sendCompat(w http.ResponseWriter, req bunrouter.Request) error {
	var body compatRequest
	infoOf(req.Context()).words = compatWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	if body.BotID == nil {
		return required("bot_id")
	}
	r := push.SendRequest{
		BotID:          *body.BotID,
		Message:        message(body.Content, body.MsgType, body.ImageURL, nil),
		IdempotencyKey: key,
	}
	// target_id 0 is the empty value of the integer field (no target has
	// id 0): like an omitted or null target_id it names no target.
	if body.TargetID != nil {
		if *body.TargetID < 0 {
			return s.refuseTargets(req, r.BotID, push.RequestKindSingle,
				push.Errorf(push.Invalid, "invalid_target_id", "target_id %d is not a target id: give the id of a target bound to the bot", *body.TargetID))
		}
		r.TargetID = *body.TargetID
	}
	return s.single(w, req, r)
}

// refuseTargets returns the engine's refusal when botID is on a platform
// without targets (the caller named a target it should have left out), and
// otherwise err, the transport's own refusal of the target.
func (s *Server) refuseTargets(req bunrouter.Request, botID int64, kind push.RequestKind, err error) error {
	if rerr := s.eng.RefuseTargets(req.Context(), principalOf(req.Context()), botID, kind); rerr != nil {
		return rerr
	}
	return err
}

// single sends and answers with the message record: 200 when delivered,
// 202 while pending or uncertain, 500 when the platform refused it.
func (s *Server) single(w http.ResponseWriter, req bunrouter.Request, r push.SendRequest) error {
	res, err := s.eng.Send(req.Context(), principalOf(req.Context()), r)
	if err != nil {
		return err
	}
	s.noteJobs(w, req, res)
	j := res.Jobs[0]
	data := messageRecord(j)
	switch j.State {
	case push.StateSucceeded:
		writeOK(w, http.StatusOK, "", data)
	case push.StateQueued, push.StateRunning:
		writeOK(w, http.StatusAccepted, "the message is still being sent: track it with GET /api/openapi/queue/"+j.ID+" and do not resend it", data)
	case push.StateUncertain:
		writeOK(w, http.StatusAccepted, "delivery is uncertain: "+j.Error+"; query the job and do not resend it", data)
	case push.StateFailed:
		infoOf(req.Context()).reason = "platform_failed"
		writeJSON(w, http.StatusInternalServerError, errorBody{
			Code: http.StatusInternalServerError, Error: "platform_failed", Data: data,
			Message: "the message was not delivered: " + j.Error,
		})
	default: // canceled, expired: only seen on a replay
		writeOK(w, http.StatusOK, "the job was "+string(j.State)+": "+j.Error, data)
	}
	return nil
}
