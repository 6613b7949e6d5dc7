package wecom_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/platforms/wecom"
	"github.com/heraldpush/herald/push"
)

// sink records the events a webhook reports.
type sink struct{ events []push.Event }

func (s *sink) Handle(_ context.Context, ev push.Event) (push.EventReply, error) {
	s.events = append(s.events, ev)
	return push.EventReply{Text: "ok"}, nil
}

func (s *sink) SaveCursor(context.Context, string) error { return nil }

// FuzzWebhook: arbitrary requests to the webhook (URL checks and
// messages) are refused without an event unless signed; arbitrary
// messages, encrypted for the corp and signed as WeCom does, are decoded
// without a panic or a 5xx.
func FuzzWebhook(f *testing.F) {
	const (
		corpID = "ww0123456789abcdef"
		token  = "tok3n"
		aesKey = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
	)
	cfg, _ := json.Marshal(map[string]any{"corp_id": corpID, "corp_secret": "0123456789abcdef", "agent_id": 1000002, "token": token, "encoding_aes_key": aesKey})
	bot := push.Bot{ID: 1, Platform: "wecom", Config: cfg}
	p := wecom.New(nil, wecom.Options{})
	key, _ := wxcrypt.Key(aesKey)
	f.Add([]byte("<xml><ToUserName>ww1</ToUserName><FromUserName>u1</FromUserName><CreateTime>1</CreateTime><MsgType>text</MsgType><Content>bind ABC</Content><MsgId>1</MsgId><AgentID>1000002</AgentID></xml>"), "msg_signature=x&timestamp=1&echostr=abc", []byte("<xml/>"), false)
	f.Add([]byte("<xml><FromUserName>u1</FromUserName><MsgType>event</MsgType><Event>unsubscribe</Event></xml>"), "", []byte(""), true)
	f.Add([]byte("not xml"), "%zz", []byte("<xml><Encrypt>AAAA</Encrypt></xml>"), false)
	f.Fuzz(func(t *testing.T, inner []byte, query string, raw []byte, get bool) {
		method := http.MethodPost
		if get {
			method = http.MethodGet
		}
		q, _ := url.ParseQuery(query)
		var s sink
		r := p.Webhook(context.Background(), bot, push.WebhookRequest{Method: method, Query: q, Body: raw}, &s)
		if r.Status != http.StatusUnauthorized || len(s.events) != 0 {
			t.Fatalf("an unsigned request: %d with %d events", r.Status, len(s.events))
		}
		ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), "123"
		enc, err := wxcrypt.Encrypt(key, inner, corpID)
		if err != nil {
			t.Fatal(err)
		}
		q = url.Values{"timestamp": {ts}, "nonce": {nonce}, "msg_signature": {wxcrypt.Signature(token, ts, nonce, enc)}}
		if get {
			q.Set("echostr", enc)
		}
		body := []byte("<xml><Encrypt><![CDATA[" + enc + "]]></Encrypt></xml>")
		r = p.Webhook(context.Background(), bot, push.WebhookRequest{Method: method, Query: q, Body: body}, &s)
		switch {
		case get && (r.Status != http.StatusOK || string(r.Body) != string(inner)):
			t.Fatalf("a signed URL check: %d %q, want the plaintext", r.Status, r.Body)
		case r.Status != http.StatusOK && r.Status != http.StatusBadRequest && r.Status != http.StatusRequestEntityTooLarge:
			t.Fatalf("a signed message: %d %s", r.Status, r.Body)
		}
	})
}
