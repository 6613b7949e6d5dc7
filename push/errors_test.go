package push_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestErrorsInTheEnginesWords: the engine's refusals name the input they
// are about by its Field, as the message writes it, with the value given
// and the limit passed; they never speak of a JSON field, a header or a
// route, which belong to the front ends.
func TestErrorsInTheEnginesWords(t *testing.T) {
	h := testkit.New(t, testkit.WithoutStart())
	f := h.Seed(t)
	p := push.AccountPrincipal(f.Account.ID)
	single := func(r push.SendRequest) func() error {
		return func() error {
			if r.BotID == 0 {
				r.BotID = f.Bot.ID
			}
			if r.TargetID == 0 {
				r.TargetID = f.Target.ID
			}
			_, err := h.Engine.Send(ctx, p, r)
			return err
		}
	}
	type facts struct {
		Reason string
		Field  push.Field
		Value  string
		Limit  int64
	}
	tests := []struct {
		name string
		err  func() error
		want facts
	}{
		{"message type", single(push.SendRequest{Message: push.Message{Type: 3, Content: "x"}}), facts{"invalid_msg_type", push.FieldMsgType, "3", 0}},
		{"image without URL", single(push.SendRequest{Message: push.Message{Type: push.MsgTypeImage}}), facts{"missing_image_url", push.FieldImageURL, "", 0}},
		{"image URL", single(push.SendRequest{Message: push.Message{ImageURL: "file:///etc/passwd"}}), facts{"invalid_image_url", push.FieldImageURL, "file:///etc/passwd", 0}},
		{"content too long", single(push.SendRequest{Message: push.Message{Content: strings.Repeat("字", 2001)}}), facts{"content_too_long", push.FieldContent, "2001", 2000}},
		{"empty", single(push.SendRequest{}), facts{"empty_message", push.FieldContent, "", 0}},
		{"target type", single(push.SendRequest{TargetType: "channel", Message: text("x")}), facts{"invalid_target_type", push.FieldTargetType, "channel", 0}},
		{"target type mismatch", single(push.SendRequest{TargetType: push.TargetGroup, Message: text("x")}), facts{"target_type_mismatch", push.FieldTargetType, "group", 0}},
		{"idempotency key", single(push.SendRequest{IdempotencyKey: "has space", Message: text("x")}), facts{"invalid_idempotency_key", push.FieldIdempotencyKey, "has space", 100}},
		{"idempotency key counted in characters", single(push.SendRequest{IdempotencyKey: strings.Repeat("é", 60), Message: text("x")}), facts{"invalid_idempotency_key", push.FieldIdempotencyKey, strings.Repeat("é", 40) + "…", 100}},
		{"unknown bot", single(push.SendRequest{BotID: 999, Message: text("x")}), facts{"bot_not_found", push.FieldBot, "", 0}},
		{"unknown target", single(push.SendRequest{TargetID: 999, Message: text("x")}), facts{"target_not_found", push.FieldTarget, "", 0}},
		{"too many targets", func() error {
			ids := make([]int64, 51)
			for i := range ids {
				ids[i] = int64(i + 1)
			}
			_, err := h.Engine.SendBatch(ctx, p, push.BatchRequest{BotID: f.Bot.ID, TargetIDs: ids, Message: text("x")})
			return err
		}, facts{"too_many_targets", push.FieldTargets, "51", 50}},
		{"no groups", func() error {
			_, err := h.Engine.SendMulti(ctx, p, push.MultiRequest{Message: text("x")})
			return err
		}, facts{"missing_bots", push.FieldGroups, "", 0}},
		{"job id", func() error {
			_, err := h.Engine.Jobs().Get(ctx, p, "nope")
			return err
		}, facts{"invalid_job_id", push.FieldJob, "nope", 0}},
		{"page limit", func() error {
			_, err := h.Engine.Bots().List(ctx, p, push.BotFilter{AccountID: f.Account.ID, Limit: 501})
			return err
		}, facts{"invalid_limit", push.FieldLimit, "501", 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			var pe *push.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%v is not a *push.Error", err)
			}
			got := facts{pe.Reason, pe.Field, pe.Value, pe.Limit}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("facts of %q (-want +got):\n%s", pe.Message, diff)
			}
			if !strings.Contains(pe.Message, string(pe.Field)) {
				t.Errorf("message %q does not name its field %q", pe.Message, pe.Field)
			}
			for _, api := range []string{"msgType", "msg_type", "imageUrl", "image_url", "targetType", "botId", "bot_id", "target_id", "target_ids", "Idempotency-Key", "jobId", "/openapi", "header"} {
				if strings.Contains(pe.Message, api) {
					t.Errorf("message %q speaks of %q", pe.Message, api)
				}
			}
		})
	}
}
