package transport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

const (
	privatePath = "/openapi/v1/push/private"
	compatPath  = "/openapi/send"
	batchPath   = "/openapi/batch-send"
	multiPath   = "/openapi/v1/push/batch"
)

// TestStrictBodiesRefuse sends bodies that today's decoder would read
// otherwise than they say (a field it does not know, a case variant, a
// field given twice, both spellings of a field with different values,
// text it would alter): each is a 400 naming the field, and nothing is
// charged, queued or sent.
func TestStrictBodiesRefuse(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	bot, target := f.Bot.ID, f.Target.ID
	one := fmt.Sprintf(`"botId":%d,"target":"%d"`, bot, target)
	oneCompat := fmt.Sprintf(`"bot_id":%d,"target_id":%d`, bot, target)
	tests := []struct {
		name, path, body string
		reason           string
		says             []string
	}{
		// unknown fields, and the field they probably meant
		{"v1 unknown field", privatePath, `{` + one + `,"content":"x","colour":"red"}`, "unknown_field", []string{`"colour"`, "botId, target, content, msgType"}},
		{"v1 misspelt field", privatePath, `{` + one + `,"contnet":"x"}`, "unknown_field", []string{`"contnet"`, "did you mean content?"}},
		{"v1 misspelt alias", privatePath, `{` + one + `,"content":"x","msg_typ":2}`, "unknown_field", []string{`"msg_typ"`, "did you mean msgType?"}},
		{"compat misspelt field", compatPath, `{` + oneCompat + `,"content":"x","image_ur":"https://e.com/a.png"}`, "unknown_field", []string{`"image_ur"`, "did you mean image_url?", "bot_id, target_id"}},
		{"batch misspelt field", batchPath, fmt.Sprintf(`{"bot_id":%d,"target_id":[%d],"content":"x"}`, bot, target), "unknown_field", []string{`"target_id"`, "did you mean target_ids?"}},
		{"multi unknown item field", multiPath, fmt.Sprintf(`{"bots":[{"botId":%d,"target":["%d"]}],"content":"x"}`, bot, target), "unknown_field", []string{`"bots[0].target"`, "did you mean bots[0].targets?"}},
		// case variants
		{"v1 case variant", privatePath, `{` + one + `,"content":"x","MsgType":2}`, "field_name_case", []string{`"MsgType"`, "write msgType"}},
		{"v1 case variant of an alias", privatePath, `{` + one + `,"content":"x","Msg_Type":2}`, "field_name_case", []string{`"Msg_Type"`, "write msg_type"}},
		{"compat case variant", compatPath, `{` + oneCompat + `,"Content":"x"}`, "field_name_case", []string{`"Content"`, "write content"}},
		{"multi case variant in an item", multiPath, fmt.Sprintf(`{"bots":[{"BotId":%d,"targets":["%d"]}],"content":"x"}`, bot, target), "field_name_case", []string{"bots[0].BotId", "write bots[0].botId"}},
		// duplicate keys
		{"v1 duplicate field", privatePath, `{` + one + `,"content":"x","content":"y"}`, "duplicate_field", []string{`"content"`, "twice"}},
		{"v1 duplicate by escape", privatePath, `{` + one + `,"content":"x","\u0063ontent":"y"}`, "duplicate_field", []string{`"content"`}},
		{"compat duplicate field", compatPath, `{` + oneCompat + `,"bot_id":1,"content":"x"}`, "duplicate_field", []string{`"bot_id"`}},
		{"batch duplicate field", batchPath, fmt.Sprintf(`{"bot_id":%d,"target_ids":[%d],"content":"x","msg_type":0,"msg_type":2}`, bot, target), "duplicate_field", []string{`"msg_type"`}},
		{"multi duplicate in an item", multiPath, fmt.Sprintf(`{"bots":[{"botId":%d,"targets":["%d"]},{"botId":%d,"targets":["%d"],"targets":["1"]}],"content":"x"}`, bot, target, bot, target), "duplicate_field", []string{`"bots[1].targets"`}},
		// both spellings, different values
		{"v1 both spellings differ", privatePath, `{` + one + `,"content":"x","msgType":2,"msg_type":0}`, "conflicting_fields", []string{"msgType", "msg_type", "give one of them"}},
		{"v1 both target spellings differ", privatePath, `{` + one + `,"target_id":99,"content":"x"}`, "conflicting_fields", []string{"target", "target_id"}},
		{"compat both bot spellings differ", compatPath, `{` + oneCompat + `,"botId":99,"content":"x"}`, "conflicting_fields", []string{"botId", "bot_id"}},
		{"batch both spellings differ", batchPath, fmt.Sprintf(`{"bot_id":%d,"target_ids":[%d],"targetIds":[99],"content":"x"}`, bot, target), "conflicting_fields", []string{"target_ids", "targetIds"}},
		{"multi both spellings differ in an item", multiPath, fmt.Sprintf(`{"bots":[{"botId":%d,"bot_id":99,"targets":["%d"]}],"content":"x"}`, bot, target), "conflicting_fields", []string{"bots[0].botId", "bots[0].bot_id"}},
		// text the decoder would alter
		{"invalid UTF-8 in content", privatePath, "{" + one + `,"content":"caf` + "\xe9" + ` au lait"}`, "invalid_text", []string{"content", "not valid UTF-8", "0xe9", "character 4"}},
		{"invalid UTF-8 in a field name", privatePath, "{" + one + `,"content":"x","` + "\xff" + `":1}`, "invalid_text", []string{"field name", "UTF-8"}},
		{"lone high surrogate", privatePath, `{` + one + `,"content":"a\ud800b"}`, "invalid_text", []string{"content", "lone UTF-16 surrogate", `\ud800`}},
		{"lone high surrogate at the end", privatePath, `{` + one + `,"content":"a\ud83d"}`, "invalid_text", []string{"content", "surrogate"}},
		{"lone low surrogate", compatPath, `{` + oneCompat + `,"content":"\udc00"}`, "invalid_text", []string{"content", "surrogate"}},
		{"two high surrogates", privatePath, `{` + one + `,"content":"\ud83d\ud83d"}`, "invalid_text", []string{"surrogate"}},
		{"NUL in content", privatePath, `{` + one + `,"content":"a\u0000b"}`, "invalid_text", []string{"content", "NUL"}},
		{"NUL in the target", privatePath, fmt.Sprintf(`{"botId":%d,"target":"%d\u0000","content":"x"}`, bot, target), "invalid_text", []string{"target", "NUL"}},
		{"NUL in a multi target", multiPath, fmt.Sprintf(`{"bots":[{"botId":%d,"targets":["\u0000"]}],"content":"x"}`, bot), "invalid_text", []string{"bots[0].targets[0]", "NUL"}},
		{"invalid UTF-8 in the image URL", compatPath, "{" + oneCompat + `,"image_url":"https://e.com/` + "\xc3\x28" + `.png"}`, "invalid_text", []string{"image_url", "UTF-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, balance, sent := h.CountJobs(t), h.Balance(t, f.Account.ID), h.Telegram.Requests()
			r := h.Call(t, "POST", tt.path, f.Key, tt.body, "Idempotency-Key", "strict-"+strings.ReplaceAll(tt.name, " ", "-"))
			var e errAnswer
			r.Decode(t, &e)
			if r.Status != 400 || e.Code != 400 || e.Error != tt.reason {
				t.Fatalf("got %d %s; want 400 %s", r.Status, r.Body, tt.reason)
			}
			for _, s := range tt.says {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q lacks %q", e.Message, s)
				}
			}
			if h.CountJobs(t) != jobs || h.Balance(t, f.Account.ID) != balance || h.Telegram.Requests() != sent {
				t.Fatalf("a refusal: %d jobs (was %d), balance %d (was %d), %d platform requests (was %d)",
					h.CountJobs(t), jobs, h.Balance(t, f.Account.ID), balance, h.Telegram.Requests(), sent)
			}
			// The refused key stays free: the request, made right, is
			// sent under it.
			if r := h.Call(t, "GET", "/openapi/queue-request?key=strict-"+strings.ReplaceAll(tt.name, " ", "-"), f.Key, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"data":null`) {
				t.Fatalf("the key of a refused request was taken: %d %s", r.Status, r.Body)
			}
		})
	}
}

// sentAs is what the fake Telegram received, as far as the meaning of a
// request goes.
type sentAs struct {
	Method, Text, ParseMode, Photo string
}

// TestStrictBodiesAccept sends each field under the other endpoint's
// spelling (and under both, with one value): the message sent is the one
// the request names.
func TestStrictBodiesAccept(t *testing.T) {
	h := testkit.New(t, testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	bot, target := f.Bot.ID, f.Target.ID
	markdown := sentAs{Method: "sendMessage", Text: "<b>bold</b>", ParseMode: "HTML"}
	photo := sentAs{Method: "sendPhoto", Photo: "https://e.com/a.png"}
	tests := []struct {
		name, path, body string
		want             sentAs
	}{
		{"v1 msg_type", privatePath, fmt.Sprintf(`{"botId":%d,"target":"%d","content":"**bold**","msg_type":2}`, bot, target), markdown},
		{"v1 image_url", privatePath, fmt.Sprintf(`{"botId":%d,"target":"%d","image_url":"https://e.com/a.png"}`, bot, target), photo},
		{"v1 bot_id and target_id", privatePath, fmt.Sprintf(`{"bot_id":%d,"target_id":%d,"content":"**bold**","msgType":2}`, bot, target), markdown},
		{"v1 both spellings alike", privatePath, fmt.Sprintf(`{"botId":%d,"bot_id":%d,"target":"%d","target_id":%d,"content":"**bold**","msgType":2,"msg_type":2}`, bot, bot, target, target), markdown},
		{"v1 target_type", privatePath, fmt.Sprintf(`{"botId":%d,"target":"%d","content":"**bold**","msgType":2,"target_type":"user","is_wakeup":false}`, bot, target), markdown},
		{"compat msgType", compatPath, fmt.Sprintf(`{"bot_id":%d,"target_id":%d,"content":"**bold**","msgType":2}`, bot, target), markdown},
		{"compat imageUrl", compatPath, fmt.Sprintf(`{"bot_id":%d,"target_id":%d,"imageUrl":"https://e.com/a.png"}`, bot, target), photo},
		{"compat botId and target", compatPath, fmt.Sprintf(`{"botId":%d,"target":"%d","msg_type":7,"image_url":"https://e.com/a.png","targetType":"user"}`, bot, target), photo},
		{"batch msgType", batchPath, fmt.Sprintf(`{"botId":%d,"targetIds":[%d],"content":"**bold**","msgType":2}`, bot, target), markdown},
		{"multi msg_type", multiPath, fmt.Sprintf(`{"bots":[{"bot_id":%d,"targets":["%d"]}],"content":"**bold**","msg_type":2}`, bot, target), markdown},
		{"multi image_url", multiPath, fmt.Sprintf(`{"bots":[{"botId":%d,"targets":["%d"]}],"image_url":"https://e.com/a.png"}`, bot, target), photo},
		{"a surrogate pair", privatePath, fmt.Sprintf(`{"botId":%d,"target":"%d","content":"\ud83d\ude00 ok"}`, bot, target), sentAs{Method: "sendMessage", Text: "😀 ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.Telegram.Messages())
			r := h.Call(t, "POST", tt.path, f.Key, tt.body)
			if r.Status != 200 {
				t.Fatalf("got %d %s", r.Status, r.Body)
			}
			msgs := h.Telegram.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("%d messages sent, want 1", len(msgs)-before)
			}
			m := msgs[len(msgs)-1]
			if diff := cmp.Diff(tt.want, sentAs{m.Method, m.Text, m.ParseMode, m.Photo}); diff != "" {
				t.Fatalf("sent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImageURLAsContent: an image message without an image URL whose
// content is an http(s) URL sends that URL as the image; other content
// is still refused, charging nothing.
func TestImageURLAsContent(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	bot, target := f.Bot.ID, f.Target.ID
	tests := []struct {
		name, path string
		body       map[string]any
		status     int
		want       sentAs // for 200
		says       string // for 400
	}{
		{"v1 https URL", privatePath, map[string]any{"botId": bot, "target": itoa(target), "msgType": 7, "content": "https://e.com/a.png"}, 200, sentAs{Method: "sendPhoto", Photo: "https://e.com/a.png"}, ""},
		{"v1 http URL with spaces around", privatePath, map[string]any{"botId": bot, "target": itoa(target), "msgType": 7, "content": " http://e.com/b.jpg\n"}, 200, sentAs{Method: "sendPhoto", Photo: "http://e.com/b.jpg"}, ""},
		{"compat URL", compatPath, map[string]any{"bot_id": bot, "target_id": target, "msg_type": 7, "content": "https://e.com/c.png"}, 200, sentAs{Method: "sendPhoto", Photo: "https://e.com/c.png"}, ""},
		{"v1 words", privatePath, map[string]any{"botId": bot, "target": itoa(target), "msgType": 7, "content": "look at this"}, 400, sentAs{}, "needs an imageUrl"},
		{"v1 URL and words", privatePath, map[string]any{"botId": bot, "target": itoa(target), "msgType": 7, "content": "https://e.com/a.png is nice"}, 400, sentAs{}, "needs an imageUrl"},
		{"v1 ftp URL", privatePath, map[string]any{"botId": bot, "target": itoa(target), "msgType": 7, "content": "ftp://e.com/a.png"}, 400, sentAs{}, "needs an imageUrl"},
		{"compat words", compatPath, map[string]any{"bot_id": bot, "target_id": target, "msg_type": 7, "content": "a cat"}, 400, sentAs{}, "needs an image_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, balance, before := h.CountJobs(t), h.Balance(t, f.Account.ID), len(h.Telegram.Messages())
			r := h.Call(t, "POST", tt.path, f.Key, tt.body)
			if r.Status != tt.status {
				t.Fatalf("got %d %s; want %d", r.Status, r.Body, tt.status)
			}
			if tt.status != 200 {
				var e errAnswer
				r.Decode(t, &e)
				if e.Error != "missing_image_url" || !strings.Contains(e.Message, tt.says) {
					t.Fatalf("got %s; want missing_image_url saying %q", r.Body, tt.says)
				}
				if h.CountJobs(t) != jobs || h.Balance(t, f.Account.ID) != balance || len(h.Telegram.Messages()) != before {
					t.Fatal("a refused image message was stored, charged or sent")
				}
				return
			}
			msgs := h.Telegram.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("%d messages sent, want 1", len(msgs)-before)
			}
			m := msgs[len(msgs)-1]
			if diff := cmp.Diff(tt.want, sentAs{m.Method, m.Text, m.ParseMode, m.Photo}); diff != "" {
				t.Fatalf("sent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayComparesMeaning: a resubmission that spells the same request
// otherwise (the bound target's type given, the default values given,
// the image URL given as the content of an image message) replays it;
// one that means another request is a 409. Either way nothing more is
// sent or charged.
func TestReplayComparesMeaning(t *testing.T) {
	h := testkit.New(t, testkit.WithPoints(push.Points{Enabled: true}), testkit.WithLimits(push.Limits{RatePerMinute: -1}))
	f := h.Seed(t)
	base := func(extra map[string]any) map[string]any {
		m := map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "hello"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	image := func(extra map[string]any) map[string]any {
		m := map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "imageUrl": "https://e.com/a.png"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name          string
		first, second map[string]any
		status        int
	}{
		{"targetType of the bound target", base(nil), base(map[string]any{"targetType": "user"}), 200},
		{"targetType first, then left out", base(map[string]any{"targetType": "user"}), base(nil), 200},
		{"msgType 0", base(nil), base(map[string]any{"msgType": 0}), 200},
		{"isWakeup false", base(nil), base(map[string]any{"isWakeup": false}), 200},
		{"empty imageUrl", base(nil), base(map[string]any{"imageUrl": ""}), 200},
		{"all defaults at once", base(nil), base(map[string]any{"msgType": 0, "isWakeup": false, "imageUrl": "", "targetType": "user"}), 200},
		{"the other spelling", base(nil), map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "hello", "msg_type": 0}, 200},
		{"image with msgType 7", image(nil), image(map[string]any{"msgType": 7}), 200},
		{"image as content", image(nil), map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "msgType": 7, "content": "https://e.com/a.png"}, 200},
		{"another targetType", base(nil), base(map[string]any{"targetType": "group"}), 409},
		{"another content", base(nil), base(map[string]any{"content": "hello!"}), 409},
		{"another msgType", base(nil), base(map[string]any{"msgType": 2}), 409},
		{"wake-up mode", base(nil), base(map[string]any{"isWakeup": true}), 409},
		{"another image", image(nil), map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "msgType": 7, "content": "https://e.com/b.png"}, 409},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "meaning-" + strings.NewReplacer(" ", "-", ",", "").Replace(tt.name)
			r := h.Call(t, "POST", privatePath, f.Key, tt.first, "Idempotency-Key", key)
			if r.Status != 200 {
				t.Fatalf("first: %d %s", r.Status, r.Body)
			}
			jobs, balance, sent := h.CountJobs(t), h.Balance(t, f.Account.ID), len(h.Telegram.Messages())
			path := privatePath
			if _, ok := tt.second["bot_id"]; ok {
				path = compatPath
			}
			r = h.Call(t, "POST", path, f.Key, tt.second, "Idempotency-Key", key)
			if r.Status != tt.status {
				t.Fatalf("resubmission: %d %s; want %d", r.Status, r.Body, tt.status)
			}
			if tt.status == 200 && r.Header.Get("Idempotency-Replay") != "true" {
				t.Fatalf("resubmission answered without Idempotency-Replay: %v", r.Header)
			}
			if tt.status == 409 {
				var e errAnswer
				r.Decode(t, &e)
				if e.Error != "idempotency_conflict" {
					t.Fatalf("resubmission: %s; want idempotency_conflict", r.Body)
				}
			}
			if h.CountJobs(t) != jobs || h.Balance(t, f.Account.ID) != balance || len(h.Telegram.Messages()) != sent {
				t.Fatal("the resubmission queued, charged or sent something")
			}
		})
	}
}

// TestIdempotencyKeyCountsCharacters: the length of an Idempotency-Key
// and the position of a character it may not hold count characters, not
// bytes.
func TestIdempotencyKeyCountsCharacters(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	tests := []struct{ key, says string }{
		{strings.Repeat("é", 101), "is 101 characters long"},
		{strings.Repeat("k", 60) + "é", "'é' at position 61"},
		{"ключ", "'к' at position 1"},
	}
	for _, tt := range tests {
		r := h.Call(t, "POST", privatePath, f.Key, map[string]any{"botId": f.Bot.ID, "target": itoa(f.Target.ID), "content": "x"}, "Idempotency-Key", tt.key)
		var e errAnswer
		r.Decode(t, &e)
		if r.Status != 400 || e.Error != "invalid_idempotency_key" || !strings.Contains(e.Message, tt.says) {
			t.Errorf("key of %d bytes: %d %s; want 400 saying %q", len(tt.key), r.Status, r.Body, tt.says)
		}
	}
	if h.CountJobs(t) != 0 {
		t.Fatal("a refused key queued a job")
	}
}

// TestCompatNamesItsOwnFields: the compatibility endpoint's refusals name
// its own fields, also those the platforms' checks make.
func TestCompatNamesItsOwnFields(t *testing.T) {
	h := testkit.New(t)
	f := h.Seed(t)
	fs := fake.NewFeishu(t)
	app := fs.NewApp()
	fs.AddUser("open_id", "ou_7d8a6e6df7621556ce0d21922b676706")
	fb := h.PlatformBot(t, f.Account.ID, "feishu", app.Config(fs))
	ft := h.Target(t, fb.ID, push.TargetUser, "ou_7d8a6e6df7621556ce0d21922b676706")
	tests := []struct {
		name string
		body map[string]any
		says string
	}{
		{"refused image host", map[string]any{"bot_id": fb.ID, "target_id": ft.ID, "image_url": "http://169.254.169.254/a.png"}, "image_url"},
		{"bad target type", map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "x", "target_type": "channel"}, "target_type"},
		{"target type mismatch", map[string]any{"bot_id": f.Bot.ID, "target_id": f.Target.ID, "content": "x", "targetType": "group"}, "target_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Call(t, "POST", compatPath, f.Key, tt.body)
			var e errAnswer
			r.Decode(t, &e)
			if r.Status != 400 || !strings.Contains(e.Message, tt.says) {
				t.Fatalf("got %d %s; want 400 naming %s", r.Status, r.Body, tt.says)
			}
			for _, v1 := range []string{"imageUrl", "targetType", "botId", "msgType", "isWakeup"} {
				if strings.Contains(e.Message, v1) {
					t.Errorf("message %q speaks of %s", e.Message, v1)
				}
			}
		})
	}
	if h.CountJobs(t) != 0 {
		t.Fatal("a refusal queued a job")
	}
}
