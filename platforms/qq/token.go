package qq

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// seconds reads a lifetime that QQ sends as a string ("7200") although its
// documentation says number; both are accepted.
type seconds int64

// UnmarshalJSON accepts a JSON number or a string holding one.
func (s *seconds) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if len(b) == 0 || string(b) == "null" {
		*s = 0
		return nil
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		*s = seconds(n)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("expires_in %q is not a number of seconds", b)
	}
	*s = seconds(f)
	return nil
}

// tokenAnswer is getAppAccessToken's answer: a token, or a code and a
// message.
type tokenAnswer struct {
	AccessToken string  `json:"access_token"`
	ExpiresIn   seconds `json:"expires_in"`
	Code        int     `json:"code"`
	Message     string  `json:"message"`
}

func tokenKey(c Config) string {
	return tokencache.Key("qq", c.tokenBase(), c.AppID, c.ClientSecret)
}

// fetchToken asks QQ for the app access token. Nothing reaches a chat
// here, so a lost answer is retryable; a refusal of the credentials is
// definitive.
func (p *Provider) fetchToken(c Config) tokencache.FetchFunc {
	return func(ctx context.Context) (tokencache.Token, error) {
		body := map[string]string{"appId": c.AppID, "clientSecret": c.ClientSecret}
		resp, err := p.client.PostJSON(ctx, c.tokenBase()+"/app/getAppAccessToken", body, http.Header{})
		if err != nil {
			return tokencache.Token{}, httpcall.NothingSent(err, "getting the app access token")
		}
		var ans tokenAnswer
		if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil {
			if resp.Status >= 500 || resp.Status == http.StatusTooManyRequests || resp.Status < 300 {
				return tokencache.Token{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: strconv.Itoa(resp.Status),
					Message: fmt.Sprintf("the token endpoint answered HTTP %d with a body that is not a token; nothing was sent", resp.Status)}
			}
			return tokencache.Token{}, push.DefinitiveError(strconv.Itoa(resp.Status),
				"the token endpoint answered HTTP %d with a body that is not the API's: check the bot's token_base", resp.Status)
		}
		if ans.AccessToken != "" && ans.ExpiresIn > 0 {
			now := p.tokens.Now()
			return tokencache.Token{Value: ans.AccessToken, ExpiresAt: now.Add(time.Duration(ans.ExpiresIn) * time.Second)}, nil
		}
		code := strconv.Itoa(ans.Code)
		switch {
		case ans.AccessToken != "":
			return tokencache.Token{}, &push.SendError{Outcome: push.OutcomeRetryable, Message: "the token endpoint gave a token without a lifetime (expires_in); nothing was sent"}
		case ans.Code == 100001 || ans.Code == 100002 || resp.Status >= 500 || resp.Status == http.StatusTooManyRequests:
			// 100001 too many requests, 100002 internal error.
			return tokencache.Token{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: code, RetryAfter: time.Second,
				Message: "the token endpoint is busy: " + ans.Message + "; nothing was sent"}
		default:
			return tokencache.Token{}, push.DefinitiveError(code,
				"the token endpoint refused the bot's credentials: %s: check the bot's app_id and client_secret in the QQ bot console", orStatus(ans.Message, resp.Status))
		}
	}
}

func orStatus(msg string, status int) string {
	if msg != "" {
		return msg
	}
	return fmt.Sprintf("HTTP %d", status)
}

// withToken runs call with the bot's token, refreshing it once when the
// API refuses it. A fresh token refused again is a definitive failure.
func withToken[T any](ctx context.Context, p *Provider, c Config, call func(ctx context.Context, token string) (T, error)) (T, error) {
	return tokencache.DoRefreshing(ctx, p.tokens, tokenKey(c), p.fetchToken(c), call,
		"the API refused a freshly issued access token: check that api_base and token_base belong to the same QQ environment")
}
