package feishu

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/mdlinks"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// imageTypes are the formats Feishu takes for message images.
func imageTypes() []string {
	return []string{"image/jpeg", "image/png", "image/webp", "image/gif", "image/bmp",
		"image/x-icon", "image/vnd.microsoft.icon", "image/tiff", "image/heic"}
}

func (p *Provider) apiBase(c Config) string {
	def := FeishuBase
	if c.Domain == DomainLark {
		def = LarkBase
	}
	return botconfig.BaseOr(c.APIBase, def)
}

func (p *Provider) tokenBase(c Config) string {
	return botconfig.BaseOr(c.TokenBase, p.apiBase(c))
}

// mustJSON encodes v, which is always encodable.
func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// textContent is the content string of a text message.
func textContent(s string) string { return mustJSON(map[string]string{"text": s}) }

// cardContent is the content string of an interactive card (schema 2.0)
// holding the Markdown in one markdown element.
func cardContent(md string) string {
	return mustJSON(map[string]any{
		"schema": "2.0",
		"body":   map[string]any{"elements": []map[string]string{{"tag": "markdown", "content": mdlinks.ImagesToLinks(md)}}},
	})
}

// postContent is the content string of a post with an image and a caption
// below it.
func postContent(imageKey, caption, domain string) string {
	lang := "zh_cn"
	if domain == DomainLark {
		lang = "en_us"
	}
	return mustJSON(map[string]any{lang: map[string]any{
		"title": "",
		"content": [][]map[string]string{
			{{"tag": "img", "image_key": imageKey}},
			{{"tag": "text", "text": caption}},
		},
	}})
}

// uuidFor is the request's uuid: the job id (a UUID, 36 characters), or a
// digest of it when it is longer than Feishu's 50.
func uuidFor(jobID string) string {
	if len(jobID) <= MaxUUID {
		return jobID
	}
	sum := sha256.Sum256([]byte(jobID))
	return hex.EncodeToString(sum[:])[:MaxUUID]
}

// answer is Feishu's envelope.
type answer struct {
	Code              *int            `json:"code"`
	Msg               string          `json:"msg"`
	Data              json.RawMessage `json:"data"`
	TenantAccessToken string          `json:"tenant_access_token"`
	Expire            int             `json:"expire"`
}

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	r, ok := p.parseAddress(d.Target.Address)
	if !ok {
		return push.Receipt{}, push.DefinitiveError("", "the target address %q is not a feishu receive id", d.Target.Address)
	}
	api, tokenBase := p.apiBase(c), p.tokenBase(c)
	key := tokencache.Key("feishu", tokenBase, c.AppID, c.AppSecret)
	fetch := func(ctx context.Context) (tokencache.Token, error) { return p.fetchToken(ctx, tokenBase, c) }

	m := d.Message
	var msgType, content string
	switch m.Type {
	case push.MsgTypeImage:
		img, err := p.images.Fetch(ctx, m.ImageURL, imageTypes()...)
		if err != nil {
			return push.Receipt{}, err
		}
		imageKey, err := tokencache.DoRefreshing(ctx, p.tokens, key, fetch, func(ctx context.Context, tok string) (string, error) {
			return p.upload(ctx, api, tok, img)
		}, freshTokenRefused)
		if err != nil {
			return push.Receipt{}, httpcall.NothingSent(err, "uploading the image")
		}
		if text := caption(m); text != "" {
			msgType, content = "post", postContent(imageKey, text, c.Domain)
		} else {
			msgType, content = "image", mustJSON(map[string]string{"image_key": imageKey})
		}
	case push.MsgTypeMarkdown:
		msgType, content = "interactive", cardContent(m.Content)
	default:
		msgType, content = "text", textContent(m.Content)
	}
	body := map[string]any{"receive_id": r.id, "msg_type": msgType, "content": content}
	uuid := ""
	if d.JobID != "" {
		uuid = uuidFor(d.JobID)
		body["uuid"] = uuid
	}
	u := api + "/open-apis/im/v1/messages?receive_id_type=" + r.idType
	create := func(ctx context.Context) (string, error) {
		return tokencache.DoRefreshing(ctx, p.tokens, key, fetch, func(ctx context.Context, tok string) (string, error) {
			return p.post(ctx, u, tok, body)
		}, freshTokenRefused)
	}

	// Keep a third of the attempt's time for one re-send with the same
	// uuid, should the answer to the first be lost.
	first := ctx
	if deadline, ok := ctx.Deadline(); ok && uuid != "" {
		var cancel context.CancelFunc
		first, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)*2/3))
		defer cancel()
	}
	id, err := create(first)
	if err == nil {
		return push.Receipt{PlatformIndex: id}, nil
	}
	se := push.AsSendError(err)
	if se.Outcome != push.OutcomeUncertain || uuid == "" {
		return push.Receipt{}, se
	}
	// The answer was lost. Feishu delivers a uuid at most once an hour, so
	// sending the same request again cannot deliver it twice: it either
	// delivers it now or answers for the message it already has.
	t := time.NewTimer(p.pause)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return push.Receipt{}, se
	}
	id, err2 := create(ctx)
	if err2 == nil {
		return push.Receipt{PlatformIndex: id}, nil
	}
	return push.Receipt{}, &push.SendError{Outcome: push.OutcomeUncertain, Code: se.Code, Err: se,
		Message: se.Error() + "; sent once more with the same uuid, which Feishu delivers at most once, and that failed too: " + push.AsSendError(err2).Error()}
}

// post sends one message and returns its message_id.
func (p *Provider) post(ctx context.Context, u, token string, body any) (string, error) {
	resp, err := p.client.PostJSON(ctx, u, body, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		return "", err
	}
	a, err := read(resp)
	if err != nil {
		return "", err
	}
	var data struct {
		MessageID string `json:"message_id"`
	}
	if err := json.Unmarshal(a.Data, &data); err != nil || data.MessageID == "" {
		return "", httpcall.Unreadable(resp, fmt.Errorf("no data.message_id in the answer"))
	}
	return data.MessageID, nil
}

// read classifies an answer of Feishu's open platform.
func read(resp *httpcall.Response) (answer, error) {
	var a answer
	o := httpcall.Origin{Platform: "feishu", Name: "Feishu", Hint: "check api_base"}
	if resp.Status == http.StatusTooManyRequests {
		// Only a 429 waits: every other answer, a send's success
		// included, is spared reading the header.
		o.Wait = resetWait(resp)
	}
	if err := httpcall.DecodeOwn(resp, &a, func() bool { return a.Code != nil }, "no code in the answer", o); err != nil {
		return a, err
	}
	if *a.Code == 0 && resp.Status < 300 {
		return a, nil
	}
	return a, classify(*a.Code, a.Msg, resp)
}

// Token errors: the call was refused before anything was sent.
func tokenCode(code int) bool {
	return code == 99991661 || code == 99991663 || code == 99991664 || code == 99991671
}

// classify maps a Feishu error to an outcome.
func classify(code int, msg string, resp *httpcall.Response) error {
	c := strconv.Itoa(code)
	if msg == "" {
		msg = "Feishu error"
	}
	switch {
	case tokenCode(code):
		return &tokencache.Refused{Err: &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg + " (the tenant access token was refused; nothing was sent)"}}
	case code == 99991400 || resp.Status == http.StatusTooManyRequests:
		return rateLimited(c, msg, resp)
	case code == 230020 || code == 11232 || code == 1500 || code == 2200:
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg, RetryAfter: time.Second}
	case resp.Status >= 500:
		// An unknown error behind a server failure: it may have been sent.
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: c, Message: fmt.Sprintf("%s (HTTP %d)", msg, resp.Status)}
	}
	hint := map[int]string{
		230002:   "add the bot to the chat",
		230006:   "turn on the bot ability of the app in the developer console",
		230013:   "the user is outside the app's availability: add them in the app's availability settings",
		230027:   "the app lacks a permission: check its scopes in the developer console",
		99991672: "the app lacks a scope: grant im:message:send_as_bot (or im:message) in the developer console",
		10014:    "check app_secret",
		10003:    "check app_id and app_secret",
		230025:   "the message is too long",
	}[code]
	if hint != "" {
		msg += ": " + hint
	}
	return &push.SendError{Outcome: push.OutcomeDefinitive, Code: c, Message: msg}
}

// rateLimited is a gateway rate limit: retryable after resetWait.
func rateLimited(code, msg string, resp *httpcall.Response) error {
	return &push.SendError{Outcome: push.OutcomeRetryable, Code: code, Message: msg, RetryAfter: resetWait(resp)}
}

// resetWait is the wait after a rate limit that Feishu gives in
// x-ogw-ratelimit-reset (seconds), or a second.
func resetWait(resp *httpcall.Response) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("x-ogw-ratelimit-reset"))); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// freshTokenRefused is what to check when Feishu refuses a token it has
// just issued.
const freshTokenRefused = "Feishu refused a freshly issued tenant access token: check that token_base and api_base lead to the same Feishu or Lark"

// fetchToken asks for a tenant access token.
func (p *Provider) fetchToken(ctx context.Context, base string, c Config) (tokencache.Token, error) {
	ep := tokencache.Endpoint{What: "a tenant access token", Platform: "Feishu", Field: "tenant_access_token",
		Check: " (check app_id, app_secret and domain)"}
	resp, err := p.client.PostJSON(ctx, base+"/open-apis/auth/v3/tenant_access_token/internal",
		map[string]string{"app_id": c.AppID, "app_secret": c.AppSecret}, http.Header{})
	if err != nil {
		return tokencache.Token{}, ep.Failed(err)
	}
	a, err := read(resp)
	if err != nil {
		return tokencache.Token{}, ep.Failed(err)
	}
	return ep.Token(p.tokens.Now(), a.TenantAccessToken, a.Expire)
}

// upload sends an image to /open-apis/im/v1/images and returns its
// image_key.
func (p *Provider) upload(ctx context.Context, api, token string, img imagefetch.Image) (string, error) {
	resp, err := p.client.PostFile(ctx, api+"/open-apis/im/v1/images", [][2]string{{"image_type", "message"}},
		httpcall.File{Field: "image", Filename: img.Filename, ContentType: img.ContentType, Data: img.Data},
		http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		return "", err
	}
	a, err := read(resp)
	if err != nil {
		return "", err
	}
	var data struct {
		ImageKey string `json:"image_key"`
	}
	if err := json.Unmarshal(a.Data, &data); err != nil || data.ImageKey == "" {
		return "", &push.SendError{Outcome: push.OutcomeRetryable, Message: "Feishu answered the upload without data.image_key"}
	}
	return data.ImageKey, nil
}
