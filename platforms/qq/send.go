package qq

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/mdtext"
	"github.com/heraldpush/herald/push"
)

// QQ's message types.
const (
	msgText     = 0
	msgMarkdown = 2
	msgMedia    = 7
)

// Send implements push.Platform.
//
// Markdown goes as native Markdown (msg_type 2). When QQ answers 50056
// (the bot has no Markdown grant), the platform refused the request and
// delivered nothing, so the same job sends the Markdown once more as plain
// text (msg_type 0) with the markup removed; that is the only second send
// of one job, and it happens only after a definitive refusal.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	cfg, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	tt := d.AsType
	if tt == "" {
		tt = d.Target.Type
	}
	sc := scene{group: tt == push.TargetGroup, wakeup: d.Message.Wakeup}
	if sc.group && sc.wakeup {
		return push.Receipt{}, push.DefinitiveError("", "qq sends wake-up messages only to users, never to groups")
	}
	prefix := "/v2/users/"
	if sc.group {
		prefix = "/v2/groups/"
	}
	path := prefix + url.PathEscape(d.Target.Address)

	var body map[string]any
	switch d.Message.Type {
	case push.MsgTypeImage:
		info, err := p.upload(ctx, cfg, path, d.Message.ImageURL, sc)
		if err != nil {
			return push.Receipt{}, err
		}
		// QQ wants a non-empty content beside the media; the caption, if
		// any, goes there.
		content := d.Message.Content
		if strings.TrimSpace(content) == "" {
			content = " "
		}
		body = map[string]any{"msg_type": msgMedia, "content": content, "media": map[string]string{"file_info": info}}
	case push.MsgTypeMarkdown:
		body = map[string]any{"msg_type": msgMarkdown, "markdown": map[string]string{"content": d.Message.Content}}
	default:
		body = map[string]any{"msg_type": msgText, "content": d.Message.Content}
	}
	if sc.wakeup {
		body["is_wakeup"] = true
	}
	setReply(body, d.Reply)
	id, err := p.post(ctx, cfg, path, body, sc)
	var se *push.SendError
	if d.Message.Type == push.MsgTypeMarkdown && errors.As(err, &se) && se.Outcome == push.OutcomeDefinitive && se.Code == strconv.Itoa(codeMarkdownDenied) {
		text := mdtext.Render(d.Message.Content, mdtext.TextLink)
		if strings.TrimSpace(text) == "" {
			text = d.Message.Content
		}
		body = map[string]any{"msg_type": msgText, "content": text}
		if sc.wakeup {
			body["is_wakeup"] = true
		}
		// The refused Markdown used no reply: the text takes the same one.
		setReply(body, d.Reply)
		id, err = p.post(ctx, cfg, path, body, sc)
	}
	if err != nil {
		return push.Receipt{}, err
	}
	return push.Receipt{PlatformIndex: id}, nil
}

// post sends one message and returns its id.
func (p *Provider) post(ctx context.Context, cfg Config, path string, body map[string]any, sc scene) (string, error) {
	return withToken(ctx, p, cfg, func(ctx context.Context, token string) (string, error) {
		resp, err := p.client.PostJSON(ctx, cfg.apiBase()+path+"/messages", body, p.header(cfg, token))
		if err != nil {
			return "", err
		}
		ans, err := decode(resp, sc)
		if err != nil {
			return "", err
		}
		if ans.ID == "" {
			return "", httpcall.Unreadable(resp, errors.New("no message id in the answer"))
		}
		return ans.ID, nil
	})
}

// upload has QQ fetch the image URL for this chat (srv_send_msg false:
// nothing is sent yet) and returns the file_info to send. Nothing reaches
// the chat here, so a lost answer is retryable rather than uncertain.
func (p *Provider) upload(ctx context.Context, cfg Config, path, imageURL string, sc scene) (string, error) {
	body := map[string]any{"file_type": 1, "url": imageURL, "srv_send_msg": false}
	info, err := withToken(ctx, p, cfg, func(ctx context.Context, token string) (string, error) {
		resp, err := p.client.PostJSON(ctx, cfg.apiBase()+path+"/files", body, p.header(cfg, token))
		if err != nil {
			return "", err
		}
		ans, err := decode(resp, sc)
		if err != nil {
			return "", err
		}
		if ans.FileInfo == "" {
			return "", httpcall.Unreadable(resp, errors.New("no file_info in the answer"))
		}
		return ans.FileInfo, nil
	})
	if err != nil {
		return "", httpcall.NothingSent(err, "uploading the image")
	}
	return info, nil
}

func (p *Provider) header(cfg Config, token string) http.Header {
	return http.Header{"Authorization": {"QQBot " + token}, "X-Union-Appid": {cfg.AppID}}
}
