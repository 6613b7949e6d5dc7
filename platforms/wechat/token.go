package wechat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// tokenAnswer is the token endpoints' answer.
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int64  `json:"expires_in"`
	ErrCode     int    `json:"errcode"`
	ErrMsg      string `json:"errmsg"`
}

// tokenKey is one cache entry per account (and token host and endpoint):
// WeChat's classic endpoint invalidates older tokens, so every send of an
// account shares one token.
func tokenKey(c Config) string {
	return tokencache.Key("wechat", c.tokenBase(), c.TokenAPI, c.AppID, c.AppSecret)
}

// fetchToken asks WeChat for an access token. The stable endpoint is
// never asked to force a refresh: a refused token is replaced by asking
// again without force_refresh, which returns the current token (a new one
// once the old expired) without the daily limit of forced refreshes and
// without invalidating the token other servers of the same account use.
// Nothing reaches a user here, so a lost answer is retryable.
func (p *Provider) fetchToken(c Config) tokencache.FetchFunc {
	return func(ctx context.Context) (tokencache.Token, error) {
		var (
			resp *httpcall.Response
			err  error
		)
		if c.TokenAPI == TokenClassic {
			q := url.Values{"grant_type": {"client_credential"}, "appid": {c.AppID}, "secret": {c.AppSecret}}
			req, rerr := http.NewRequest(http.MethodGet, c.tokenBase()+"/cgi-bin/token?"+q.Encode(), nil)
			if rerr != nil {
				return tokencache.Token{}, push.DefinitiveError("", "the token_base cannot be requested")
			}
			resp, err = p.client.Do(ctx, req)
		} else {
			body := map[string]any{"grant_type": "client_credential", "appid": c.AppID, "secret": c.AppSecret, "force_refresh": false}
			resp, err = p.client.PostJSON(ctx, c.tokenBase()+"/cgi-bin/stable_token", body, http.Header{})
		}
		if err != nil {
			return tokencache.Token{}, httpcall.NothingSent(err, "getting the access token")
		}
		var ans tokenAnswer
		if jerr := json.Unmarshal(resp.Body, &ans); jerr != nil {
			if resp.Status >= 400 && resp.Status < 500 && resp.Status != http.StatusTooManyRequests {
				return tokencache.Token{}, push.DefinitiveError(strconv.Itoa(resp.Status),
					"the token endpoint answered HTTP %d with a body that is not WeChat's: check the bot's token_base", resp.Status)
			}
			return tokencache.Token{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: strconv.Itoa(resp.Status),
				Message: fmt.Sprintf("the token endpoint answered HTTP %d with a body that is not a token; nothing was sent", resp.Status)}
		}
		if ans.ErrCode == 0 && ans.AccessToken != "" && ans.ExpiresIn > 0 {
			return tokencache.Token{Value: ans.AccessToken, ExpiresAt: p.tokens.Now().Add(time.Duration(ans.ExpiresIn) * time.Second)}, nil
		}
		if ans.ErrCode == 0 {
			return tokencache.Token{}, &push.SendError{Outcome: push.OutcomeRetryable, Message: "the token endpoint answered without a token or lifetime; nothing was sent"}
		}
		switch ans.ErrCode {
		case -1, 45009, 45011: // busy, daily and per-minute quotas
			se := classifyCode(ans.ErrCode, ans.ErrMsg, p.tokens.Now())
			se.Message = "getting the access token: " + se.Message
			return tokencache.Token{}, se
		}
		hint := "check the bot's app_id and app_secret in the Official Account's developer settings"
		if ans.ErrCode == 40164 {
			hint = "add this server's public IP address to the Official Account's IP whitelist"
		}
		return tokencache.Token{}, push.DefinitiveError(strconv.Itoa(ans.ErrCode), "the token endpoint refused the account's credentials: %s: %s", ans.ErrMsg, hint)
	}
}

// withToken runs call with the account's token, refreshing it once when
// WeChat refuses it. A fresh token refused again is a definitive failure.
func withToken[T any](ctx context.Context, p *Provider, c Config, call func(ctx context.Context, token string) (T, error)) (T, error) {
	return tokencache.DoRefreshing(ctx, p.tokens, tokenKey(c), p.fetchToken(c), call,
		"WeChat refused a freshly issued access token: another server may be fetching tokens for the same account with the classic endpoint")
}
