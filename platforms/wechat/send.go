package wechat

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/imagefetch"
	"github.com/heraldpush/herald/push"
)

// Send implements push.Platform.
//
// An image is downloaded (guarded by the shared fetcher) and uploaded as
// temporary media first; neither step reaches the user. An image with a
// caption is two customer-service messages, the caption's text and then
// the image, because WeChat image messages carry no text: if the text is
// delivered and the image is not, the job does not retry (the text would
// arrive twice) and its error says what arrived.
func (p *Provider) Send(ctx context.Context, d push.Delivery) (push.Receipt, error) {
	cfg, err := p.configs.Get(d.Bot.Config, p.parseConfig)
	if err != nil {
		return push.Receipt{}, push.DefinitiveError("", "%v", err)
	}
	if d.AsType == push.TargetGroup || d.Target.Type == push.TargetGroup {
		return push.Receipt{}, push.DefinitiveError("", "a wechat Official Account cannot send to groups")
	}
	to := d.Target.Address
	switch d.Message.Type {
	case push.MsgTypeImage:
		// WeChat takes PNG, JPEG and GIF as image media.
		img, err := p.images.Fetch(ctx, d.Message.ImageURL, "image/png", "image/jpeg", "image/gif")
		if err != nil {
			return push.Receipt{}, err
		}
		mediaID, err := p.upload(ctx, cfg, img)
		if err != nil {
			return push.Receipt{}, err
		}
		if d.Message.Content != "" {
			if err := p.custom(ctx, cfg, textMessage(to, d.Message.Content)); err != nil {
				return push.Receipt{}, err
			}
		}
		err = p.custom(ctx, cfg, map[string]any{"touser": to, "msgtype": "image", "image": map[string]string{"media_id": mediaID}})
		if err != nil && d.Message.Content != "" {
			return push.Receipt{}, afterCaption(err)
		}
		return push.Receipt{}, err
	case push.MsgTypeMarkdown:
		return push.Receipt{}, p.custom(ctx, cfg, textMessage(to, RenderMarkdown(d.Message.Content)))
	default:
		return push.Receipt{}, p.custom(ctx, cfg, textMessage(to, d.Message.Content))
	}
}

func textMessage(to, content string) map[string]any {
	return map[string]any{"touser": to, "msgtype": "text", "text": map[string]string{"content": content}}
}

// afterCaption words the failure of an image sent after its caption was
// delivered: never retried, since a retry would send the caption again.
func afterCaption(err error) error {
	se := push.AsSendError(err)
	out := &push.SendError{Outcome: se.Outcome, Code: se.Code, Err: se.Err,
		Message: "the caption was delivered as a text message, but the image was not: " + se.Message}
	if out.Outcome == push.OutcomeRetryable {
		out.Outcome = push.OutcomeDefinitive
	}
	return out
}

// custom sends one customer-service message. WeChat answers no message
// id, so there is no platformIndex.
func (p *Provider) custom(ctx context.Context, cfg Config, body map[string]any) error {
	data, err := marshal(body)
	if err != nil {
		return push.DefinitiveError("", "encode the message: %v", err)
	}
	_, err = withToken(ctx, p, cfg, func(ctx context.Context, token string) (struct{}, error) {
		req, err := http.NewRequest(http.MethodPost, cfg.apiBase()+"/cgi-bin/message/custom/send?access_token="+url.QueryEscape(token), bytes.NewReader(data))
		if err != nil {
			return struct{}{}, push.DefinitiveError("", "the api_base cannot be requested")
		}
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		resp, err := p.client.Do(ctx, req)
		if err != nil {
			return struct{}{}, err
		}
		_, err = decode(resp, p.tokens.Now())
		return struct{}{}, err
	})
	return err
}

// marshal encodes JSON as WeChat reads it: WeChat shows \u escapes
// literally, so <, > and & (in links) are written as themselves.
func marshal(v any) ([]byte, error) {
	out, err := httpcall.MarshalUnescaped(v)
	if err != nil {
		return nil, err
	}
	out = bytes.ReplaceAll(out, []byte(`\u2028`), []byte("\u2028"))
	return bytes.ReplaceAll(out, []byte(`\u2029`), []byte("\u2029")), nil
}

// upload stores the image as temporary media (3 days) and returns its
// media_id.
func (p *Provider) upload(ctx context.Context, cfg Config, img imagefetch.Image) (string, error) {
	file := httpcall.File{Field: "media", Filename: img.Filename, ContentType: img.ContentType, Data: img.Data}
	id, err := withToken(ctx, p, cfg, func(ctx context.Context, token string) (string, error) {
		resp, err := p.client.PostFile(ctx, cfg.apiBase()+"/cgi-bin/media/upload?access_token="+url.QueryEscape(token)+"&type=image", nil, file, nil)
		if err != nil {
			return "", err
		}
		ans, err := decode(resp, p.tokens.Now())
		if err != nil {
			return "", err
		}
		if ans.MediaID == "" {
			return "", httpcall.Unreadable(resp, errors.New("no media_id in the answer"))
		}
		return ans.MediaID, nil
	})
	if err != nil {
		return "", httpcall.NothingSent(err, "uploading the image")
	}
	return id, nil
}
