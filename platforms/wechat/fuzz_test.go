package wechat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald/platforms/internal/wxcrypt"
	"github.com/heraldpush/herald/platforms/wechat"
	"github.com/heraldpush/herald/push"
)

// sink records the events a webhook reports.
type sink struct{ events []push.Event }

func (s *sink) Handle(_ context.Context, ev push.Event) (push.EventReply, error) {
	s.events = append(s.events, ev)
	return push.EventReply{Text: "ok"}, nil
}

func (s *sink) SaveCursor(context.Context, string) error { return nil }

// FuzzWebhook: arbitrary requests to the webhook are refused without an
// event unless signed; arbitrary messages, signed and encrypted as WeChat
// does, are decoded without a panic or a 5xx, and a reply is always XML.
func FuzzWebhook(f *testing.F) {
	const (
		appID  = "wx0123456789abcdef"
		token  = "tok3n"
		aesKey = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
	)
	cfg, _ := json.Marshal(map[string]string{"app_id": appID, "app_secret": "0123456789abcdef0123456789abcdef", "token": token, "encoding_aes_key": aesKey})
	bot := push.Bot{ID: 1, Platform: "wechat", Config: cfg}
	p := wechat.New(nil)
	key, _ := wxcrypt.Key(aesKey)
	f.Add([]byte("<xml><ToUserName>gh_1</ToUserName><FromUserName>o1</FromUserName><CreateTime>1</CreateTime><MsgType>text</MsgType><Content>bind ABC</Content><MsgId>1</MsgId></xml>"), "signature=x&timestamp=1", []byte("<xml/>"))
	f.Add([]byte("<xml><FromUserName>o1</FromUserName><MsgType>event</MsgType><Event>subscribe</Event><EventKey>qrscene_X</EventKey></xml>"), "", []byte(""))
	f.Add([]byte("<xml><FromUserName>o1</FromUserName><MsgType>event</MsgType><Event>SCAN</Event><EventKey></EventKey></xml>"), "encrypt_type=aes", []byte("<xml><Encrypt>AAAA</Encrypt></xml>"))
	f.Add([]byte("not xml"), "%zz", []byte("<xml>"))
	f.Fuzz(func(t *testing.T, inner []byte, query string, raw []byte) {
		q, _ := url.ParseQuery(query)
		var s sink
		r := p.Webhook(context.Background(), bot, push.WebhookRequest{Method: http.MethodPost, Query: q, Body: raw}, &s)
		if r.Status != http.StatusUnauthorized || len(s.events) != 0 {
			t.Fatalf("an unsigned request: %d with %d events", r.Status, len(s.events))
		}
		ts, nonce := strconv.FormatInt(time.Now().Unix(), 10), "123"
		enc, err := wxcrypt.Encrypt(key, inner, appID)
		if err != nil {
			t.Fatal(err)
		}
		q = url.Values{"timestamp": {ts}, "nonce": {nonce}, "signature": {wxcrypt.Signature(token, ts, nonce)},
			"encrypt_type": {"aes"}, "msg_signature": {wxcrypt.Signature(token, ts, nonce, enc)}}
		body := []byte("<xml><Encrypt><![CDATA[" + enc + "]]></Encrypt></xml>")
		r = p.Webhook(context.Background(), bot, push.WebhookRequest{Method: http.MethodPost, Query: q, Body: body}, &s)
		switch r.Status {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("a signed message: %d %s", r.Status, r.Body)
		}
		if len(s.events) > 0 && r.ContentType != "application/xml; charset=utf-8" {
			t.Fatalf("a reply of type %q", r.ContentType)
		}
	})
}
