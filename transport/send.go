package transport

import (
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// privateRequest is the body of POST /openapi/v1/push/private. It takes
// every field under the compatibility endpoint's name too (tagged alias):
// a field that a request names in the other spelling is never ignored.
type privateRequest struct {
	BotID         *int64  `json:"botId"`
	BotIDAlt      *int64  `json:"bot_id" alias:"botId"`
	Target        *string `json:"target"`
	TargetID      *int64  `json:"target_id" alias:"target"`
	Content       *string `json:"content"`
	MsgType       *int    `json:"msgType"`
	MsgTypeAlt    *int    `json:"msg_type" alias:"msgType"`
	ImageURL      *string `json:"imageUrl"`
	ImageURLAlt   *string `json:"image_url" alias:"imageUrl"`
	TargetType    *string `json:"targetType"`
	TargetTypeAlt *string `json:"target_type" alias:"targetType"`
	IsWakeup      *bool   `json:"isWakeup"`
	IsWakeupAlt   *bool   `json:"is_wakeup" alias:"isWakeup"`
}

// compatRequest is the body of POST /openapi/send: the same fields as
// privateRequest, whose own names here are the older ones.
type compatRequest struct {
	BotID         *int64  `json:"botId" alias:"bot_id"`
	BotIDAlt      *int64  `json:"bot_id"`
	Target        *string `json:"target" alias:"target_id"`
	TargetID      *int64  `json:"target_id"`
	Content       *string `json:"content"`
	MsgType       *int    `json:"msgType" alias:"msg_type"`
	MsgTypeAlt    *int    `json:"msg_type"`
	ImageURL      *string `json:"imageUrl" alias:"image_url"`
	ImageURLAlt   *string `json:"image_url"`
	TargetType    *string `json:"targetType" alias:"target_type"`
	TargetTypeAlt *string `json:"target_type"`
	IsWakeup      *bool   `json:"isWakeup" alias:"is_wakeup"`
	IsWakeupAlt   *bool   `json:"is_wakeup"`
}

func (s *Server) sendPrivate(w http.ResponseWriter, req bunrouter.Request) error {
	var body privateRequest
	infoOf(req.Context()).words = privateWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	r, err := s.singleRequest(req, body, privateWords)
	if err != nil {
		return err
	}
	r.IdempotencyKey = key
	return s.single(w, req, r)
}

func (s *Server) sendCompat(w http.ResponseWriter, req bunrouter.Request) error {
	var body compatRequest
	infoOf(req.Context()).words = compatWords
	key, err := s.readSend(w, req, &body)
	if err != nil {
		return err
	}
	r, err := s.singleRequest(req, privateRequest(body), compatWords)
	if err != nil {
		return err
	}
	r.IdempotencyKey = key
	return s.single(w, req, r)
}

// singleRequest reads a single send's body, whose fields each endpoint
// names in its own words (e) and takes in the other's too.
func (s *Server) singleRequest(req bunrouter.Request, b privateRequest, e endpoint) (push.SendRequest, error) {
	// pair names a field by its two names, the endpoint's own first.
	pair := func(camel, snake string) (string, string) {
		if e == compatWords {
			return snake, camel
		}
		return camel, snake
	}
	var r push.SendRequest
	botName, _ := pair("botId", "bot_id")
	botID, err := either(b.BotID, "botId", b.BotIDAlt, "bot_id")
	if err != nil {
		return r, err
	}
	if botID == nil {
		return r, required(botName)
	}
	r.BotID = *botID
	var imageURL, targetType *string
	var msgType *int
	var wakeup *bool
	if msgType, err = either(b.MsgType, "msgType", b.MsgTypeAlt, "msg_type"); err != nil {
		return r, err
	}
	if imageURL, err = either(b.ImageURL, "imageUrl", b.ImageURLAlt, "image_url"); err != nil {
		return r, err
	}
	if targetType, err = either(b.TargetType, "targetType", b.TargetTypeAlt, "target_type"); err != nil {
		return r, err
	}
	if wakeup, err = either(b.IsWakeup, "isWakeup", b.IsWakeupAlt, "is_wakeup"); err != nil {
		return r, err
	}
	r.Message = message(b.Content, msgType, imageURL, wakeup)
	// An omitted, null or empty target, and a target_id 0 (the empty
	// value of the integer field: no target has id 0), address a bot's
	// one destination on platforms without targets.
	var byName, byID *int64
	if b.Target != nil && *b.Target != "" {
		id, err := parseTargetID("target", *b.Target)
		if err != nil {
			return r, s.refuseTargets(req, r.BotID, push.RequestKindSingle, err)
		}
		byName = &id
	}
	if b.TargetID != nil && *b.TargetID != 0 {
		if *b.TargetID < 0 {
			return r, s.refuseTargets(req, r.BotID, push.RequestKindSingle,
				push.Errorf(push.Invalid, "invalid_target_id", "target_id %d is not a target id: give the id of a target bound to the bot", *b.TargetID))
		}
		byID = b.TargetID
	}
	target, err := either(byName, "target", byID, "target_id")
	if err != nil {
		return r, err
	}
	if target != nil {
		r.TargetID = *target
	}
	if targetType != nil {
		r.TargetType = push.TargetType(*targetType)
		if !r.TargetType.Valid() {
			name, _ := pair("targetType", "target_type")
			return r, push.Errorf(push.Invalid, "invalid_target_type", "%s %q is not supported: use \"user\" or \"group\", or leave it out", name, truncate(*targetType, 40))
		}
	}
	return r, nil
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
