package transport

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// Accounts, points, the audit trail and the platforms.

type accountCreateRequest struct {
	Name string `json:"name"`
}

type accountUpdateRequest struct {
	Name   *string `json:"name"`
	Status *string `json:"status"`
}

type grantRequest struct {
	AccountID int64  `json:"accountId"`
	Amount    int64  `json:"amount"`
	Reason    string `json:"reason"`
}

type platformView struct {
	Name        string   `json:"name"`
	Targets     bool     `json:"targets"`
	TargetTypes []string `json:"targetTypes"`
	Verifies    bool     `json:"verifies"`
}

func (s *Server) listAccounts(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	page, err := s.eng.Accounts().List(req.Context(), principal(req), push.AccountFilter{Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newAccountView)
}

func (s *Server) createAccount(w http.ResponseWriter, req bunrouter.Request) error {
	var body accountCreateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	a, err := s.eng.Accounts().Create(req.Context(), principal(req), body.Name)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "", newAccountView(a))
	return nil
}

func (s *Server) getAccount(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "account")
	if err != nil {
		return err
	}
	a, err := s.eng.Accounts().Get(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newAccountView(a))
	return nil
}

func (s *Server) updateAccount(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "account")
	if err != nil {
		return err
	}
	var body accountUpdateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	if body.Name == nil && body.Status == nil {
		return push.Errorf(push.Invalid, "nothing_to_change", "give a new name, a status (active or suspended), or both")
	}
	u := push.AccountUpdate{Name: body.Name}
	if body.Status != nil {
		st := push.AccountStatus(*body.Status)
		u.Status = &st
	}
	a, err := s.eng.Accounts().Update(req.Context(), principal(req), id, u)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newAccountView(a))
	return nil
}

func (s *Server) listLedger(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := accountParam(req)
	if err != nil {
		return err
	}
	page, err := s.eng.Ledger().List(req.Context(), principal(req), push.LedgerFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newLedgerView)
}

func (s *Server) grantPoints(w http.ResponseWriter, req bunrouter.Request) error {
	var body grantRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	a, err := s.eng.Ledger().Grant(req.Context(), principal(req), body.AccountID, body.Amount, body.Reason)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newAccountView(a))
	return nil
}

func (s *Server) listAudit(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := queryID(req, "account")
	if err != nil {
		return err
	}
	page, err := s.eng.Audit().List(req.Context(), principal(req), push.AuditFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newAuditView)
}

func (s *Server) listPlatforms(w http.ResponseWriter, req bunrouter.Request) error {
	var out []platformView
	for _, name := range s.eng.PlatformNames() {
		p, _ := s.eng.Platform(name)
		info := p.Info()
		v := platformView{Name: name, Targets: info.Targets, TargetTypes: []string{}, Verifies: s.verifies(name)}
		for _, tt := range info.TargetTypes {
			v.TargetTypes = append(v.TargetTypes, string(tt))
		}
		out = append(out, v)
	}
	writeOK(w, http.StatusOK, "", listView[platformView]{Items: out})
	return nil
}

// accountSection is accounts (operators), points, the audit trail
// (operators) and the platforms.
func (s *Server) accountSection() section {
	routes := []Route{
		{Method: http.MethodGet, Path: managePrefix + "/accounts", Summary: "List accounts", Auth: true, Browser: true, Doc: Doc{
			ID: "listAccounts", Tag: "accounts", Params: pageParams(), Description: "Every account for an operator, newest first; a member's own.",
			Answers: []Answer{okAnswer(200, "A page of accounts.", "AccountListResponse", nil)}, Errors: []int{400},
		}, Handler: s.listAccounts},
		{Method: http.MethodPost, Path: managePrefix + "/accounts", Summary: "Make an account (operators)", Auth: true, Browser: true, Doc: Doc{
			ID: "createAccount", Tag: "accounts", Body: "AccountCreateRequest",
			Description: "Makes an active account with its initial points (an account for API use; an account made by sign-up gets them at its first sign-in).",
			BodyExample: map[string]any{"name": "acme"},
			Answers:     []Answer{okAnswer(201, "The account.", "AccountResponse", nil)}, Errors: []int{400, 413},
		}, Handler: s.createAccount},
		{Method: http.MethodGet, Path: managePrefix + "/accounts/:id", Summary: "Show an account", Auth: true, Browser: true, Doc: Doc{
			ID: "getAccount", Tag: "accounts", Params: []Param{idParam("account")}, Description: "Your account (operators: any), with its balance.",
			Answers: []Answer{okAnswer(200, "The account.", "AccountResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getAccount},
		{Method: http.MethodPatch, Path: managePrefix + "/accounts/:id", Summary: "Rename, suspend or activate an account", Auth: true, Browser: true, Doc: Doc{
			ID: "updateAccount", Tag: "accounts", Params: []Param{idParam("account")}, Body: "AccountUpdateRequest",
			Description: "Renames an account (its members may), or suspends or activates it (operators): a suspended account's keys and sessions are refused at once, on every node.",
			BodyExample: map[string]any{"status": "suspended"},
			Answers:     []Answer{okAnswer(200, "The account.", "AccountResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.updateAccount},
		{Method: http.MethodGet, Path: managePrefix + "/ledger", Summary: "List an account's points movements", Auth: true, Browser: true, Doc: Doc{
			ID: "listLedger", Tag: "points", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "The points ledger of an account, newest first: charges, refunds, the initial points, grants. It sums to the balance.",
			Answers:     []Answer{okAnswer(200, "A page of ledger entries.", "LedgerEntryListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listLedger},
		{Method: http.MethodPost, Path: managePrefix + "/ledger", Summary: "Grant or deduct points (operators)", Auth: true, Browser: true, Doc: Doc{
			ID: "grantPoints", Tag: "points", Body: "GrantRequest",
			Description: "Adds points to an account (a negative amount deducts them), with a reason kept in the ledger. A deduction never takes the balance below zero (400 insufficient_points).",
			BodyExample: map[string]any{"accountId": 1, "amount": 500, "reason": "invoice 2026-11"},
			Answers:     []Answer{okAnswer(200, "The account with its new balance.", "AccountResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.grantPoints},
		{Method: http.MethodGet, Path: managePrefix + "/audit", Summary: "Read the audit trail (operators)", Auth: true, Browser: true, Doc: Doc{
			ID: "listAudit", Tag: "audit", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "Every change made through the management verbs, newest first: who, what, when, from where. It never holds a secret.",
			Answers:     []Answer{okAnswer(200, "A page of audit entries.", "AuditEntryListResponse", nil)}, Errors: []int{400},
		}, Handler: s.listAudit},
		{Method: http.MethodGet, Path: managePrefix + "/platforms", Summary: "List the platforms", Auth: true, Browser: true, Doc: Doc{
			ID: "listPlatforms", Tag: "bots", Description: "The platforms this server sends on: whether their bots have targets, and whether they can verify credentials.",
			Answers: []Answer{okAnswer(200, "The platforms.", "PlatformListResponse", nil)},
		}, Handler: s.listPlatforms},
	}
	return section{
		tags: []openAPITag{
			{"accounts", "Accounts: operators make, suspend and activate them."},
			{"points", "Points balances and their ledger."},
			{"audit", "The audit trail of the management verbs (operators)."},
		},
		routes: routes,
		schemas: map[string]Schema{
			"AccountCreateRequest": object("", false,
				req("name", str("The account's name.").with("maxLength", push.MaxName))),
			"AccountUpdateRequest": object("", false,
				opt("name", str("The new name.").with("maxLength", push.MaxName)),
				opt("status", str("active or suspended (operators).").with("enum", []string{"active", "suspended"}))),
			"GrantRequest": object("", false,
				req("accountId", idField("The account.")),
				req("amount", integer("Points to add; negative to deduct.")),
				req("reason", str(fmt.Sprintf("Why (1 to %d characters), kept in the ledger.", push.MaxNote)).with("minLength", 1, "maxLength", push.MaxNote))),
		},
	}
}
