package transport

import (
	"strings"

	"github.com/heraldpush/herald/push"
)

// endpoint is a vocabulary: how a route's request names the engine's
// inputs. The engine words its errors with its own names of them
// (push.Field); the transport replaces them with the names the caller
// sent, so that /openapi/send's refusals speak of msg_type and
// /openapi/v1/push/private's of msgType.
type endpoint uint8

// The vocabularies of the routes.
const (
	anyWords     endpoint = iota // the engine's own names
	privateWords                 // POST /openapi/v1/push/private
	compatWords                  // POST /openapi/send
	batchWords                   // POST /openapi/batch-send
	multiWords                   // POST /openapi/v1/push/batch
	jobWords                     // the job routes
)

// name returns the endpoint's name of an engine input, if it has one of
// its own.
func (e endpoint) name(f push.Field) (string, bool) {
	var n string
	switch e {
	case privateWords:
		n = oneOf(f, "botId", "target", "targetType", "msgType", "imageUrl", "")
		if f == push.FieldWakeup {
			n = "isWakeup"
		}
	case compatWords:
		n = oneOf(f, "bot_id", "target_id", "target_type", "msg_type", "image_url", "")
		if f == push.FieldWakeup {
			n = "is_wakeup"
		}
	case batchWords:
		n = oneOf(f, "bot_id", "", "", "msg_type", "image_url", "target_ids")
	case multiWords:
		n = oneOf(f, "botId", "target", "", "msgType", "imageUrl", "targets list")
	case jobWords:
		if f == push.FieldJob {
			n = "jobId"
		}
	}
	return n, n != ""
}

// oneOf picks the name of f among an endpoint's names of the bot, the
// target, the target type, the message type, the image URL and the target
// list ("" for none of its own).
func oneOf(f push.Field, bot, target, targetType, msgType, imageURL, targets string) string {
	switch f {
	case push.FieldBot:
		return bot
	case push.FieldTarget:
		return target
	case push.FieldTargetType:
		return targetType
	case push.FieldMsgType:
		return msgType
	case push.FieldImageURL:
		return imageURL
	case push.FieldTargets:
		return targets
	}
	return ""
}

// word returns the message of an engine error in the endpoint's words:
// the error's field by the endpoint's name of it, the idempotency key by
// its header, and the routes the engine cannot know of.
func (e endpoint) word(pe *push.Error) string {
	msg := pe.Message
	if name, ok := e.name(pe.Field); ok {
		msg = strings.ReplaceAll(msg, string(pe.Field), name)
	}
	msg = strings.ReplaceAll(msg, string(push.FieldIdempotencyKey), "Idempotency-Key")
	if pe.Reason == "use_single_send" {
		msg = strings.Replace(msg, "with a single send", "with a single send (/openapi/v1/push/private or /openapi/send)", 1)
	}
	return msg
}
