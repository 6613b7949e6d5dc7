package qq

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/push"
)

// QQ's webhook: each request carries X-Signature-Timestamp and
// X-Signature-Ed25519, the hex ed25519 signature of timestamp || body by
// a key whose seed is the bot's secret repeated to 32 bytes. The
// signature is checked (ed25519.Verify takes the same time for any
// signature of the right length) and the timestamp must be within
// webhookSkew of now before the body is parsed. QQ's URL check is op 13,
// answered with the plain_token and its signature by the same key.

// maxWebhookBody caps a pushed payload.
const maxWebhookBody = 1 << 20

// webhookSkew is how far a request's timestamp may be from now. QQ does
// not document one; 5 minutes refuses replays of old requests while
// allowing for clocks that differ.
const webhookSkew = 5 * time.Minute

// signingKey is the bot's ed25519 key: its secret, repeated until it has
// 32 bytes, is the seed.
func signingKey(secret string) ed25519.PrivateKey {
	if secret == "" {
		return nil
	}
	seed := make([]byte, 0, ed25519.SeedSize+len(secret))
	for len(seed) < ed25519.SeedSize {
		seed = append(seed, secret...)
	}
	return ed25519.NewKeyFromSeed(seed[:ed25519.SeedSize])
}

// verifyWebhook says whether a request is signed by the bot's key, at a
// time within webhookSkew of now. It reads only the headers and the raw
// body.
func verifyWebhook(key ed25519.PrivateKey, req push.WebhookRequest, now time.Time) bool {
	if key == nil || len(req.Body) > maxWebhookBody {
		return false
	}
	ts := req.HeaderValue("X-Signature-Timestamp")
	sigHex := req.HeaderValue("X-Signature-Ed25519")
	if len(ts) == 0 || len(ts) > 20 || len(sigHex) != 2*ed25519.SignatureSize {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := now.Sub(time.Unix(sec, 0)); d > webhookSkew || d < -webhookSkew {
		return false
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || sig[63]&0xE0 != 0 {
		return false
	}
	msg := make([]byte, 0, len(ts)+len(req.Body))
	msg = append(append(msg, ts...), req.Body...)
	return ed25519.Verify(key.Public().(ed25519.PublicKey), msg, sig)
}

// webhookAnswer answers QQ in its own format.
func webhookAnswer(v any) push.WebhookResponse {
	b, _ := json.Marshal(v)
	return push.WebhookResponse{Status: http.StatusOK, ContentType: "application/json", Body: b}
}

// decodeWebhook reads a verified body: a payload (ok false for one that is
// not).
func decodeWebhook(body []byte) (payload, bool) {
	var pl payload
	if err := json.Unmarshal(body, &pl); err != nil {
		return payload{}, false
	}
	return pl, true
}

// validation is op 13's d.
type validation struct {
	PlainToken string `json:"plain_token"`
	EventTS    string `json:"event_ts"`
}

// Webhook implements push.EventSource.
func (p *Provider) Webhook(ctx context.Context, bot push.Bot, req push.WebhookRequest, sink push.EventSink) push.WebhookResponse {
	cfg, err := p.configs.Get(bot.Config, p.parseConfig)
	if err != nil || req.Method != http.MethodPost {
		return push.WebhookRefused()
	}
	if !verifyWebhook(signingKey(cfg.ClientSecret), req, p.tokens.Now()) {
		return push.WebhookRefused()
	}
	pl, ok := decodeWebhook(req.Body)
	if !ok {
		return push.WebhookResponse{Status: http.StatusBadRequest, ContentType: "text/plain", Body: []byte("not a QQ payload\n")}
	}
	switch pl.Op {
	case opValidation:
		var v validation
		if json.Unmarshal(pl.D, &v) != nil || v.PlainToken == "" || len(v.PlainToken) > maxID || len(v.EventTS) > maxID {
			return push.WebhookResponse{Status: http.StatusBadRequest, ContentType: "text/plain", Body: []byte("op 13 without a plain_token\n")}
		}
		sig := ed25519.Sign(signingKey(cfg.ClientSecret), []byte(v.EventTS+v.PlainToken))
		return webhookAnswer(map[string]string{"plain_token": v.PlainToken, "signature": hex.EncodeToString(sig)})
	case opHeartbeat:
		return webhookAnswer(map[string]any{"op": opHeartbeatACK, "d": pl.S})
	case opDispatch:
		ev, ok := pl.event()
		if !ok {
			return webhookAnswer(map[string]int{"op": opCallbackACK, "d": 0})
		}
		if err := p.handle(ctx, cfg, ev, sink); err != nil {
			// d 1 reports a failure: QQ pushes the event again.
			return webhookAnswer(map[string]int{"op": opCallbackACK, "d": 1})
		}
		return webhookAnswer(map[string]int{"op": opCallbackACK, "d": 0})
	}
	return webhookAnswer(map[string]int{"op": opCallbackACK, "d": 0})
}
