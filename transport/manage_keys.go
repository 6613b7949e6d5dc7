package transport

import (
	"net/http"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// API keys.

type keyCreateRequest struct {
	AccountID int64      `json:"accountId"`
	Name      string     `json:"name"`
	ExpiresAt *time.Time `json:"expiresAt"`
	Role      string     `json:"role"`
}

type createdKeyView struct {
	Key    keyView `json:"key"`
	Secret string  `json:"secret"`
}

func (s *Server) listKeys(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := accountParam(req)
	if err != nil {
		return err
	}
	page, err := s.eng.Keys().List(req.Context(), principal(req), push.KeyFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newKeyView)
}

func (s *Server) createKey(w http.ResponseWriter, req bunrouter.Request) error {
	var body keyCreateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	p := principal(req)
	if body.AccountID == 0 {
		body.AccountID = p.AccountID
	}
	ttl, err := ttlUntil(body.ExpiresAt, time.Now(), "key")
	if err != nil {
		return err
	}
	k, plain, err := s.eng.Keys().Create(req.Context(), p, push.KeyCreate{AccountID: body.AccountID, Name: body.Name, TTL: ttl, Role: push.Role(body.Role)})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "keep the secret now: it is shown once, and only its hash is stored", createdKeyView{Key: newKeyView(k), Secret: plain})
	return nil
}

func (s *Server) getKey(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "key")
	if err != nil {
		return err
	}
	k, err := s.eng.Keys().Get(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newKeyView(k))
	return nil
}

func (s *Server) revokeKey(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "key")
	if err != nil {
		return err
	}
	k, err := s.eng.Keys().Revoke(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the key was revoked: every node refuses it now", newKeyView(k))
	return nil
}

// keySection is API keys.
func (s *Server) keySection() section {
	exKey := map[string]any{"id": 3, "accountId": 1, "name": "deploy script", "role": "member", "prefix": "hrd", "hint": "x7Qa",
		"createdAt": exTime, "expiresAt": nil, "revokedAt": nil}
	routes := []Route{
		{Method: http.MethodGet, Path: managePrefix + "/keys", Summary: "List API keys", Auth: true, Browser: true, Doc: Doc{
			ID: "listKeys", Tag: "keys", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "An account's API keys, newest first: names, prefixes and last four characters, never the keys.",
			Answers:     []Answer{okAnswer(200, "A page of keys.", "KeyListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listKeys},
		{Method: http.MethodPost, Path: managePrefix + "/keys", Summary: "Make an API key", Auth: true, Browser: true, Doc: Doc{
			ID: "createKey", Tag: "keys", Body: "KeyCreateRequest",
			Description: "Makes an API key for your account (operators: any account) and answers it once: only its hash is stored. " +
				"An operator key (role operator) acts on every account; only operators make them.",
			BodyExample: map[string]any{"name": "deploy script", "expiresAt": "2027-06-01T00:00:00Z"},
			Answers: []Answer{okAnswer(201, "The key and its secret (shown once).", "NewKeyResponse", map[string]any{"code": 0,
				"message": "keep the secret now: it is shown once, and only its hash is stored",
				"data":    map[string]any{"key": exKey, "secret": "hrd_4fJ2…x7Qa"}})},
			Errors: []int{400, 404, 413},
		}, Handler: s.createKey},
		{Method: http.MethodGet, Path: managePrefix + "/keys/:id", Summary: "Show an API key", Auth: true, Browser: true, Doc: Doc{
			ID: "getKey", Tag: "keys", Params: []Param{idParam("key")}, Description: "A key of your account (operators: any).",
			Answers: []Answer{okAnswer(200, "The key.", "KeyResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getKey},
		{Method: http.MethodDelete, Path: managePrefix + "/keys/:id", Summary: "Revoke an API key", Auth: true, Browser: true, Doc: Doc{
			ID: "revokeKey", Tag: "keys", Params: []Param{idParam("key")}, Description: "Revokes a key: every node refuses it at once (403 key_revoked). Revoking it again changes nothing.",
			Answers: []Answer{okAnswer(200, "The revoked key.", "KeyResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.revokeKey},
	}
	return section{
		tags:   []openAPITag{{"keys", "API keys: what programs authenticate with."}},
		routes: routes,
		schemas: map[string]Schema{
			"KeyCreateRequest": object("", false,
				opt("accountId", idField("The key's account (default: yours).")),
				opt("name", str("A name to tell it apart, e.g. the program that uses it.").with("maxLength", push.MaxName)),
				opt("expiresAt", timeField("When it expires (default: never)")),
				opt("role", roleSchema())),
			"NewKey": object("A new key and its secret.", true,
				req("key", ref("Key")),
				req("secret", str("The key itself: send it as Authorization: Bearer <key>. Shown once."))),
			"NewKeyResponse": manageEnvelope("The key.", "NewKey"),
		},
	}
}
