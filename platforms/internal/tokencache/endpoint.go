package tokencache

import (
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// DefaultLifetime is a token's lifetime when its endpoint gives none.
const DefaultLifetime = 7200 * time.Second

// Endpoint words the outcomes of a platform's token endpoint.
type Endpoint struct {
	What     string // the token, as in "getting <What>": "an access token"
	Platform string // "WeCom"
	Field    string // the answer's token field: "access_token"
	// Check is appended to a refusal of the credentials: what to check.
	Check string
}

// Failed words a failed token request or a refusing answer. Nothing was
// sent to anyone: a refusal is definitive and says what to check; any
// other failure is retryable where a send's would be uncertain.
func (e Endpoint) Failed(err error) error {
	se := push.AsSendError(err)
	if se.Outcome == push.OutcomeDefinitive {
		return &push.SendError{Outcome: push.OutcomeDefinitive, Code: se.Code, Message: "could not get " + e.What + ": " + se.Message + e.Check}
	}
	return httpcall.NothingSent(se, "getting "+e.What)
}

// Token is the token an accepting answer gave: value, living seconds
// from now (DefaultLifetime when not positive). An answer without a
// token is retryable.
func (e Endpoint) Token(now time.Time, value string, seconds int) (Token, error) {
	if value == "" {
		return Token{}, &push.SendError{Outcome: push.OutcomeRetryable,
			Message: "getting " + e.What + ": " + e.Platform + " answered without " + e.Field + "; nothing was sent"}
	}
	life := time.Duration(seconds) * time.Second
	if life <= 0 {
		life = DefaultLifetime
	}
	return Token{Value: value, ExpiresAt: now.Add(life)}, nil
}
