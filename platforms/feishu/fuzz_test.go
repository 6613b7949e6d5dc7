package feishu

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

// encryptForTest encrypts as Feishu does, with a fixed IV.
func encryptForTest(key string, plain []byte) string {
	k := sha256.Sum256([]byte(key))
	block, _ := aes.NewCipher(k[:])
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	data := append(append([]byte{}, plain...), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, aes.BlockSize+len(data))
	copy(out, "0123456789abcdef")
	cipher.NewCBCEncrypter(block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], data)
	return base64.StdEncoding.EncodeToString(out)
}

// FuzzWebhook: whatever a request holds, the verifier and the decoder
// neither panic nor accept a request without the right signature (with
// an encrypt key) or token; an event they accept decodes to a chat the
// engine can bind, or to nothing.
func FuzzWebhook(f *testing.F) {
	const token, key = "tok3n", "k3y"
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	event := []byte(`{"schema":"2.0","header":{"event_id":"e1","event_type":"im.message.receive_v1","create_time":"1800000000000","token":"tok3n"},` +
		`"event":{"sender":{"sender_id":{"open_id":"ou_abcd"},"sender_type":"user"},"message":{"message_id":"om_1","chat_id":"oc_1","chat_type":"group",` +
		`"message_type":"text","content":"{\"text\":\"@_user_1 bind ABCD\"}","mentions":[{"key":"@_user_1"}]}}}`)
	encBody, _ := json.Marshal(map[string]string{"encrypt": encryptForTest(key, event)})
	f.Add(event, false, ts, "")
	f.Add(encBody, true, ts, signature(ts, "n", key, encBody))
	f.Add([]byte(`{"challenge":"c","token":"tok3n","type":"url_verification"}`), false, "", "")
	f.Add([]byte(`{"encrypt":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}`), true, ts, "00")
	f.Fuzz(func(t *testing.T, body []byte, encrypted bool, timestamp, sig string) {
		cfg := Config{VerificationToken: token}
		if encrypted {
			cfg.EncryptKey = key
		}
		req := push.WebhookRequest{Method: http.MethodPost, Body: body, Header: map[string][]string{
			"X-Lark-Request-Timestamp": {timestamp}, "X-Lark-Request-Nonce": {"n"}, "X-Lark-Signature": {sig}}}
		env, err := verifyWebhook(cfg, req, now)
		if err != nil {
			return
		}
		if encrypted && env.Type != "url_verification" && sig != signature(timestamp, "n", key, body) {
			t.Fatalf("an event without the right signature was accepted")
		}
		if env.token() != token {
			t.Fatalf("a request with the token %q was accepted", env.token())
		}
		ev, ok := decodeEvent(env)
		if ok && (ev.ID == "" || ev.Address == "" || !ev.Type.Valid()) {
			t.Fatalf("an event of no chat: %+v", ev)
		}
	})
}

// FuzzDecrypt: decrypt never panics, and opens what was encrypted.
func FuzzDecrypt(f *testing.F) {
	f.Add("k", []byte(`{"a":1}`), "")
	f.Add("k", []byte{}, "AAAA")
	f.Fuzz(func(t *testing.T, key string, plain []byte, garbage string) {
		_, _ = decrypt(key, garbage)
		got, err := decrypt(key, encryptForTest(key, plain))
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("decrypt(encrypt(%q)) = %q, %v", plain, got, err)
		}
	})
}

// FuzzFrame: the frame decoder never panics, and a frame it reads is
// written back to the same frame.
func FuzzFrame(f *testing.F) {
	ping := frame{service: 7, method: methodControl, headers: []header{{"type", "ping"}}}
	data := frame{seqID: 1, logID: 2, service: 7, method: methodData, headers: []header{{"type", "event"}, {"message_id", "m"}, {"sum", "2"}, {"seq", "0"}},
		payloadType: "json", payload: []byte(`{"schema":"2.0"}`), logIDNew: "x"}
	f.Add(ping.marshal())
	f.Add(data.marshal())
	f.Add([]byte{0x08, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := unmarshalFrame(b)
		if err != nil {
			return
		}
		again, err := unmarshalFrame(fr.marshal())
		if err != nil {
			t.Fatalf("a frame written back does not read: %v", err)
		}
		if fr.payload == nil {
			fr.payload = again.payload // an empty payload reads back as absent
		}
		if d := cmp.Diff(fr, again, cmp.AllowUnexported(frame{}, header{})); d != "" {
			t.Fatalf("round trip (-read +again):\n%s", d)
		}
	})
}
