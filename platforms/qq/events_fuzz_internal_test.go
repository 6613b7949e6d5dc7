package qq

import (
	"crypto/ed25519"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

// fuzzSecret is the bot secret of the fuzz targets.
const fuzzSecret = "naOC0ocQE3shWLAfffVLB1rhYPG7"

// TestSigningKey: QQ's documented example: the secret repeated to 32
// bytes is the seed.
func TestSigningKey(t *testing.T) {
	got := signingKey(fuzzSecret)
	want := ed25519.NewKeyFromSeed([]byte("naOC0ocQE3shWLAfffVLB1rhYPG7naOC"))
	if !got.Equal(want) {
		t.Fatal("the signing key is not the one of QQ's example seed")
	}
}

// FuzzWebhook: whatever the headers and body, the verifier and the
// decoder neither panic nor let through a request that is not signed by
// the bot's key; a signed one verifies, and its event, if any, names a
// chat.
func FuzzWebhook(f *testing.F) {
	key := signingKey(fuzzSecret)
	now := time.Unix(1_760_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	for _, body := range []string{
		`{"op":13,"d":{"plain_token":"Arq0D5A61EgUu4OxUvOp","event_ts":"1725442341"}}`,
		`{"op":0,"id":"C2C_MESSAGE_CREATE:1","t":"C2C_MESSAGE_CREATE","s":3,"d":{"id":"ROBOT1.0_a","content":"bind ABCD2345","timestamp":"2026-11-24T10:00:00+08:00","author":{"user_openid":"U1"}}}`,
		`{"op":0,"id":"GROUP_DEL_ROBOT:2","t":"GROUP_DEL_ROBOT","d":{"group_openid":"G1","timestamp":1760000000}}`,
		`{"op":0,"t":"FRIEND_ADD","d":{"openid":""}}`,
		`{"op":1,"d":null}`, `not json`, ``,
	} {
		f.Add(ts, hex.EncodeToString(ed25519.Sign(key, []byte(ts+body))), []byte(body), true)
		f.Add(ts, "00", []byte(body), false)
	}
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte, sign bool) {
		if sign {
			sig = hex.EncodeToString(ed25519.Sign(key, append([]byte(ts), body...)))
		}
		req := push.WebhookRequest{Method: "POST", Header: map[string][]string{"X-Signature-Timestamp": {ts}, "X-Signature-Ed25519": {sig}}, Body: body}
		ok := verifyWebhook(key, req, now)
		genuine := false
		if raw, err := hex.DecodeString(sig); err == nil && len(raw) == ed25519.SignatureSize {
			genuine = ed25519.Verify(key.Public().(ed25519.PublicKey), append([]byte(ts), body...), raw)
		}
		if ok && !genuine {
			t.Fatalf("a request not signed by the bot's key verified: ts %q sig %q", ts, sig)
		}
		if sec, err := strconv.ParseInt(ts, 10, 64); ok && (err != nil || now.Sub(time.Unix(sec, 0)).Abs() > webhookSkew) {
			t.Fatalf("a request outside the time window verified: ts %q", ts)
		}
		if !ok {
			return
		}
		if pl, ok := decodeWebhook(body); ok {
			if ev, ok := pl.event(); ok && (ev.Address == "" || ev.ID == "" || !ev.Type.Valid()) {
				t.Fatalf("an event without a chat or an id: %+v", ev)
			}
		}
	})
}

// FuzzGatewayFrame: whatever a gateway frame holds, decoding it and
// turning it into an event neither panics nor yields an event without a
// chat, an id or a message id for a message.
func FuzzGatewayFrame(f *testing.F) {
	for _, s := range []string{
		`{"op":10,"d":{"heartbeat_interval":41250}}`,
		`{"op":0,"s":1,"t":"READY","d":{"session_id":"s-1","version":1}}`,
		`{"op":0,"s":2,"id":"GROUP_AT_MESSAGE_CREATE:x","t":"GROUP_AT_MESSAGE_CREATE","d":{"id":"ROBOT1.0_b","content":" bind X","group_openid":"G","author":{"member_openid":"M"}}}`,
		`{"op":0,"s":3,"id":"C2C_MSG_REJECT:y","t":"C2C_MSG_REJECT","d":{"openid":"U","timestamp":"1760000000"}}`,
		`{"op":9,"d":false}`, `{"op":11}`, `{"op":0,"s":-1}`, `[]`, `{"d":"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pl, err := decodeFrame(b)
		if err != nil {
			return
		}
		if pl.S < 0 {
			t.Fatalf("a negative seq passed: %d", pl.S)
		}
		ev, ok := pl.event()
		if !ok {
			return
		}
		if ev.ID == "" || ev.Address == "" || !ev.Type.Valid() || (ev.Kind == push.EventMessage && ev.MessageID == "") {
			t.Fatalf("an incomplete event: %+v", ev)
		}
		if parseCursor(gatewayCursor{session: "s", seq: pl.S}.String()).seq != pl.S {
			t.Fatal("a cursor does not read back")
		}
	})
}
