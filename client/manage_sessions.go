package client

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// User is a person of an account.
type User struct {
	ID                int64     `json:"id"`
	AccountID         int64     `json:"accountId"`
	Email             string    `json:"email"`
	Role              string    `json:"role"` // member or operator
	CreatedAt         time.Time `json:"createdAt"`
	PasswordChangedAt time.Time `json:"passwordChangedAt"`
	SignedInAt        time.Time `json:"signedInAt,omitzero"`
}

// Session is a signed-in session of a user.
type Session struct {
	ID int64 `json:"id"`
	// Current is true for the session of the request.
	Current   bool      `json:"current"`
	CreatedAt time.Time `json:"createdAt"`
	SeenAt    time.Time `json:"seenAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
	Address   string    `json:"address"`
	Agent     string    `json:"agent"`
}

// SignedIn is the answer of a sign-in.
type SignedIn struct {
	User    User    `json:"user"`
	Session Session `json:"session"`
	// Token is the session's token: Options.Session of a client that acts
	// for the user. Keep it secret.
	Token string `json:"-"`
}

// Me is who the client acts as.
type Me struct {
	Account Account `json:"account"`
	Role    string  `json:"role"`
	// User is the person of a session (nil for an API key).
	User *User `json:"user"`
	// KeyID is the API key's id (0 for a session).
	KeyID int64 `json:"keyId,omitempty"`
}

// Me returns who the client acts as: its account (with its balance), its
// role, and its user or key.
func (c *Client) Me(ctx context.Context) (Me, error) {
	return read[Me](ctx, c, managePrefix+"/me", nil)
}

// SessionService is signing in and out.
type SessionService struct{ c *Client }

// Sessions returns signing in and out.
func (c *Client) Sessions() SessionService { return SessionService{c} }

// SignIn signs a person in with an email and a password, and returns the
// session's token in SignedIn.Token: a client made with Options.Session
// set to it acts for the person. A wrong email or password is
// ReasonWrongCredentials; repeated failures are ReasonSignInThrottled.
func (s SessionService) SignIn(ctx context.Context, email, password string) (SignedIn, error) {
	var out SignedIn
	a, err := s.c.do(ctx, request{method: http.MethodPost, path: managePrefix + "/sessions", unsafe: true,
		body: mustJSON(map[string]string{"email": email, "password": password})})
	if err != nil {
		return out, err
	}
	if a.status != http.StatusOK || !a.herald || *a.env.Code != 0 {
		return out, unexpected(a)
	}
	if err := a.decode(&out); err != nil {
		return out, err
	}
	for _, ck := range (&http.Response{Header: a.header}).Cookies() {
		if ck.Name == sessionCookie {
			out.Token = ck.Value
		}
	}
	if out.Token == "" {
		return out, errNoSessionCookie
	}
	return out, nil
}

// List returns a page of the signed-in user's sessions.
func (s SessionService) List(ctx context.Context, o ListOptions) (Page[Session], error) {
	return list[Session](ctx, s.c, managePrefix+"/sessions", nil, o)
}

// SignOut ends one of the user's sessions by id, or the client's own
// session when id is 0.
func (s SessionService) SignOut(ctx context.Context, id int64) error {
	which := "current"
	if id != 0 {
		which = strconv.FormatInt(id, 10)
	}
	return s.c.change(ctx, http.MethodDelete, managePrefix+"/sessions/"+which, nil, nil)
}

// SignOutEverywhere ends every session of the user.
func (s SessionService) SignOutEverywhere(ctx context.Context) error {
	return s.c.change(ctx, http.MethodDelete, managePrefix+"/sessions", nil, nil)
}
