package feishu

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/push"
)

// Feishu's webhook mode ("request URL"): Feishu posts each event to the
// bot's webhook. The app's encryption strategy authenticates it: with an
// Encrypt Key, the body is {"encrypt": base64} (AES-256-CBC, key =
// sha256(encrypt key), IV = the first 16 bytes) and the request is signed,
// X-Lark-Signature = hex(sha256(timestamp + nonce + encrypt key + body));
// without one, the body is plain JSON carrying the Verification Token.
// The signature (or, without a key, the token) is checked in constant time
// before anything is acted on; the token is checked in either case, and
// so is the signed timestamp's window. The URL check (url_verification)
// is not signed: it is answered only when it decrypts and carries the
// token.

// webhookWindow is how far a request's timestamp may be from now.
const webhookWindow = 5 * time.Minute

// maxWebhookBody caps a request's body: events are small.
const maxWebhookBody = 1 << 20

// errNotVerified is a request that does not authenticate.
var errNotVerified = errors.New("the request does not verify")

// envelope is an event request, decrypted: a schema 2.0 event, a v1
// event, or the URL check.
type envelope struct {
	Schema string `json:"schema"`
	Header struct {
		EventID    string          `json:"event_id"`
		EventType  string          `json:"event_type"`
		CreateTime json.RawMessage `json:"create_time"`
		Token      string          `json:"token"`
		AppID      string          `json:"app_id"`
	} `json:"header"`
	Event json.RawMessage `json:"event"`
	// The URL check and v1 events.
	Type      string `json:"type"`
	Token     string `json:"token"`
	Challenge string `json:"challenge"`
	UUID      string `json:"uuid"`
}

// token is the verification token the request carries.
func (e *envelope) token() string {
	if e.Header.Token != "" {
		return e.Header.Token
	}
	return e.Token
}

// verifyWebhook authenticates a webhook request of a bot with cfg and
// returns what it carries. now is the time the timestamp is checked
// against.
func verifyWebhook(cfg Config, req push.WebhookRequest, now time.Time) (envelope, error) {
	var env envelope
	if req.Method != http.MethodPost || cfg.VerificationToken == "" || len(req.Body) > maxWebhookBody {
		return env, errNotVerified
	}
	signed := false
	body := req.Body
	if cfg.EncryptKey != "" {
		if sig := req.HeaderValue("X-Lark-Signature"); sig != "" {
			ts, nonce := req.HeaderValue("X-Lark-Request-Timestamp"), req.HeaderValue("X-Lark-Request-Nonce")
			want := signature(ts, nonce, cfg.EncryptKey, req.Body)
			if subtle.ConstantTimeCompare([]byte(sig), []byte(want)) != 1 {
				return env, errNotVerified
			}
			signed = true
		}
		var outer struct {
			Encrypt string `json:"encrypt"`
		}
		if err := json.Unmarshal(req.Body, &outer); err != nil || outer.Encrypt == "" {
			return env, errNotVerified
		}
		plain, err := decrypt(cfg.EncryptKey, outer.Encrypt)
		if err != nil {
			return env, errNotVerified
		}
		body = plain
	}
	if ts := req.HeaderValue("X-Lark-Request-Timestamp"); ts != "" || signed {
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || sec < now.Add(-webhookWindow).Unix() || sec > now.Add(webhookWindow).Unix() {
			return env, errNotVerified
		}
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return env, errNotVerified
	}
	if subtle.ConstantTimeCompare([]byte(env.token()), []byte(cfg.VerificationToken)) != 1 {
		return env, errNotVerified
	}
	// With an encrypt key, only the URL check comes unsigned.
	if cfg.EncryptKey != "" && !signed && env.Type != "url_verification" {
		return env, errNotVerified
	}
	return env, nil
}

// signature is X-Lark-Signature of a request.
func signature(timestamp, nonce, key string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp + nonce + key))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// decrypt opens an "encrypt" field: base64 of a 16-byte IV and the
// AES-256-CBC ciphertext under sha256(key), PKCS#7 padded.
func decrypt(key, encrypted string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(encrypted)
	if err != nil {
		return nil, err
	}
	if len(raw) < 2*aes.BlockSize || len(raw)%aes.BlockSize != 0 {
		return nil, errors.New("not an encrypted event")
	}
	k := sha256.Sum256([]byte(key))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	iv, data := raw[:aes.BlockSize], append([]byte{}, raw[aes.BlockSize:]...)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(data, data)
	pad := int(data[len(data)-1])
	if pad < 1 || pad > aes.BlockSize || bytes.Count(data[len(data)-pad:], []byte{byte(pad)}) != pad {
		return nil, errors.New("bad padding")
	}
	return data[:len(data)-pad], nil
}
