package wecom

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/platforms/internal/botconfig"
	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// imageTypes are the image formats WeCom takes.
func imageTypes() []string { return []string{"image/jpeg", "image/png"} }

// Send implements push.Platform.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	c, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	if c.Mode == ModeRobot {
		return p.sendRobot(ctx, c, d)
	}
	return p.sendApp(ctx, c, d)
}

func (p *Provider) bases(c Config) (api, token string) {
	api = botconfig.BaseOr(c.APIBase, p.apiBase)
	return api, botconfig.BaseOr(c.TokenBase, api)
}

// answer is the envelope of every WeCom API answer.
type answer struct {
	ErrCode        *int   `json:"errcode"`
	ErrMsg         string `json:"errmsg"`
	AccessToken    string `json:"access_token"`
	ExpiresIn      int    `json:"expires_in"`
	MediaID        string `json:"media_id"`
	MsgID          string `json:"msgid"`
	InvalidUser    string `json:"invaliduser"`
	UnlicensedUser string `json:"unlicenseduser"`
}

// sendApp sends through an application: to a member with message/send,
// to an application group chat with appchat/send.
func (p *Provider) sendApp(ctx context.Context, c Config, d push.Delivery) (push.Receipt, error) {
	api, tokenBase := p.bases(c)
	key := tokencache.Key("wecom", tokenBase, c.CorpID, c.CorpSecret)
	fetch := func(ctx context.Context) (tokencache.Token, error) { return p.fetchToken(ctx, tokenBase, c) }

	body := map[string]any{}
	m := d.Message
	switch {
	case m.Type == push.MsgTypeImage && caption(m) != "":
		body["msgtype"] = "news"
		body["news"] = map[string]any{"articles": []map[string]string{{"title": caption(m), "url": m.ImageURL, "picurl": m.ImageURL}}}
	case m.Type == push.MsgTypeImage:
		img, err := p.images.Fetch(ctx, m.ImageURL, imageTypes()...)
		if err != nil {
			return push.Receipt{}, err
		}
		mediaID, err := tokencache.DoRefreshing(ctx, p.tokens, key, fetch, func(ctx context.Context, tok string) (string, error) {
			return p.upload(ctx, api, tok, img)
		}, freshTokenRefused)
		if err != nil {
			return push.Receipt{}, httpcall.NothingSent(err, "uploading the image")
		}
		body["msgtype"] = "image"
		body["image"] = map[string]string{"media_id": mediaID}
	case m.Type == push.MsgTypeMarkdown:
		body["msgtype"] = "markdown"
		body["markdown"] = map[string]string{"content": markdown(m.Content)}
	default:
		body["msgtype"] = "text"
		body["text"] = map[string]string{"content": m.Content}
	}

	path := "/cgi-bin/message/send"
	if d.Target.Type == push.TargetGroup {
		path = "/cgi-bin/appchat/send"
		body["chatid"] = d.Target.Address
	} else {
		body["touser"] = d.Target.Address
		body["agentid"] = c.AgentID
		if c.DuplicateCheckInterval > 0 {
			body["enable_duplicate_check"] = 1
			body["duplicate_check_interval"] = c.DuplicateCheckInterval
		}
	}
	ans, err := tokencache.DoRefreshing(ctx, p.tokens, key, fetch, func(ctx context.Context, tok string) (answer, error) {
		return p.call(ctx, api+path+"?access_token="+url.QueryEscape(tok), body)
	}, freshTokenRefused)
	if err != nil {
		return push.Receipt{}, err
	}
	if d.Target.Type == push.TargetUser {
		if listed(ans.InvalidUser, d.Target.Address) {
			return push.Receipt{}, push.DefinitiveError("invaliduser", "WeCom accepted the request but did not deliver it: the member %q is listed in invaliduser (not a member, or outside the app's visible range: add them to the app's visible range in the admin console)", d.Target.Address)
		}
		if listed(ans.UnlicensedUser, d.Target.Address) {
			return push.Receipt{}, push.DefinitiveError("unlicenseduser", "WeCom accepted the request but did not deliver it: the member %q is listed in unlicenseduser (no active WeCom interface license: assign one in the admin console)", d.Target.Address)
		}
	}
	return push.Receipt{PlatformIndex: ans.MsgID}, nil
}

// listed reports whether id is one of the |-separated UserIDs in list
// (WeCom compares UserIDs without regard to case).
func listed(list, id string) bool {
	for _, u := range strings.Split(list, "|") {
		if u != "" && strings.EqualFold(strings.TrimSpace(u), id) {
			return true
		}
	}
	return false
}

// sendRobot sends through a group robot's webhook.
func (p *Provider) sendRobot(ctx context.Context, c Config, d push.Delivery) (push.Receipt, error) {
	api, _ := p.bases(c)
	m := d.Message
	var body map[string]any
	switch {
	case m.Type == push.MsgTypeImage && caption(m) != "":
		body = map[string]any{"msgtype": "news", "news": map[string]any{
			"articles": []map[string]string{{"title": caption(m), "url": m.ImageURL, "picurl": m.ImageURL}}}}
	case m.Type == push.MsgTypeImage:
		img, err := p.images.Fetch(ctx, m.ImageURL, imageTypes()...)
		if err != nil {
			return push.Receipt{}, err
		}
		if len(img.Data) > MaxRobotImage {
			return push.Receipt{}, push.DefinitiveError("image_too_large", "the image is %d bytes; a WeCom group robot takes images of at most %d bytes", len(img.Data), MaxRobotImage)
		}
		sum := md5.Sum(img.Data)
		body = map[string]any{"msgtype": "image", "image": map[string]string{
			"base64": base64.StdEncoding.EncodeToString(img.Data), "md5": hex.EncodeToString(sum[:])}}
	case m.Type == push.MsgTypeMarkdown:
		body = map[string]any{"msgtype": "markdown", "markdown": map[string]string{"content": markdown(m.Content)}}
	default:
		body = map[string]any{"msgtype": "text", "text": map[string]string{"content": m.Content}}
	}
	if _, err := p.call(ctx, api+"/cgi-bin/webhook/send?key="+url.QueryEscape(c.WebhookKey), body); err != nil {
		return push.Receipt{}, err
	}
	return push.Receipt{}, nil
}

// call posts a JSON body and reads WeCom's answer.
func (p *Provider) call(ctx context.Context, u string, body any) (answer, error) {
	resp, err := p.client.PostJSON(ctx, u, body, http.Header{})
	if err != nil {
		return answer{}, err
	}
	return read(resp)
}

// read classifies a WeCom answer: WeCom answers HTTP 200 with an errcode.
// A gateway's 429 in front of WeCom waits 5 s.
func read(resp *httpcall.Response) (answer, error) {
	var a answer
	if err := httpcall.DecodeOwn(resp, &a, func() bool { return a.ErrCode != nil }, "no errcode in the answer",
		httpcall.Origin{Platform: "wecom", Name: "WeCom", Hint: "check api_base", Wait: 5 * time.Second}); err != nil {
		return a, err
	}
	if *a.ErrCode == 0 {
		return a, nil
	}
	return a, classify(*a.ErrCode, a.ErrMsg)
}

// Token errors: the call was refused before anything was sent.
const (
	codeTokenInvalid = 40014
	codeTokenExpired = 42001
	codeTokenMissing = 41001
)

// classify maps a non-zero errcode to an outcome.
func classify(code int, msg string) error {
	c := strconv.Itoa(code)
	if msg == "" {
		msg = "WeCom error"
	}
	switch code {
	case codeTokenInvalid, codeTokenExpired, codeTokenMissing:
		return &tokencache.Refused{Err: &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg + " (the access token was refused; nothing was sent)"}}
	case -1: // system busy: the docs say to retry
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg, RetryAfter: time.Second}
	case 45009: // API frequency limit
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg, RetryAfter: 10 * time.Second}
	case 45033: // too many concurrent calls
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: msg, RetryAfter: 2 * time.Second}
	}
	hint := map[int]string{
		40056: "check agent_id",
		60020: "add the server's IP address to the app's trusted IPs in the WeCom admin console",
		81013: "the member does not exist or is outside the app's visible range",
		93000: "check webhook_key (the group robot may have been removed)",
		86003: "the chatid must be a group chat created by this app with appchat/create",
		48002: "the app is not allowed to call this API",
		40007: "the uploaded image was not accepted",
	}[code]
	if hint != "" {
		msg += ": " + hint
	}
	return &push.SendError{Outcome: push.OutcomeDefinitive, Code: c, Message: msg}
}

// freshTokenRefused is what to check when WeCom refuses a token it has
// just issued.
const freshTokenRefused = "WeCom refused a freshly issued access token: check that token_base and api_base lead to the same WeCom server"

// fetchToken asks /cgi-bin/gettoken for an application's access token.
// Nothing is sent to anyone, so every failure to get one is either
// retryable or a configuration error.
func (p *Provider) fetchToken(ctx context.Context, base string, c Config) (tokencache.Token, error) {
	q := url.Values{"corpid": {c.CorpID}, "corpsecret": {c.CorpSecret}}
	req, err := http.NewRequest(http.MethodGet, base+"/cgi-bin/gettoken?"+q.Encode(), nil)
	if err != nil {
		return tokencache.Token{}, push.DefinitiveError("", "wecom token request could not be built: check token_base")
	}
	ep := tokencache.Endpoint{What: "an access token", Platform: "WeCom", Field: "access_token",
		Check: ": check corp_id and corp_secret (and the app's trusted IPs)"}
	resp, err := p.client.Do(ctx, req)
	if err != nil {
		return tokencache.Token{}, ep.Failed(err)
	}
	a, err := read(resp)
	if err != nil {
		return tokencache.Token{}, ep.Failed(err)
	}
	return ep.Token(p.tokens.Now(), a.AccessToken, a.ExpiresIn)
}

// upload sends an image to /cgi-bin/media/upload and returns its media_id.
func (p *Provider) upload(ctx context.Context, api, token string, img imagefetch.Image) (string, error) {
	resp, err := p.client.PostFile(ctx, api+"/cgi-bin/media/upload?type=image&access_token="+url.QueryEscape(token), nil,
		httpcall.File{Field: "media", Filename: img.Filename, ContentType: img.ContentType, Data: img.Data,
			Disposition: fmt.Sprintf("filelength=%d", len(img.Data))}, nil)
	if err != nil {
		return "", err
	}
	a, err := read(resp)
	if err != nil {
		return "", err
	}
	if a.MediaID == "" {
		return "", &push.SendError{Outcome: push.OutcomeRetryable, Message: "WeCom answered the upload without media_id"}
	}
	return a.MediaID, nil
}
