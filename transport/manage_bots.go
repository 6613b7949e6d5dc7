package transport

import (
	"encoding/json"
	"net/http"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// Bots and their targets.

type botCreateRequest struct {
	AccountID int64           `json:"accountId"`
	Platform  string          `json:"platform"`
	Name      string          `json:"name"`
	Config    json.RawMessage `json:"config"`
	Verify    *bool           `json:"verify"`
}

type botUpdateRequest struct {
	Name   *string         `json:"name"`
	Config json.RawMessage `json:"config"`
	Verify *bool           `json:"verify"`
}

type targetBindRequest struct {
	Type    string `json:"type"`
	Address string `json:"address"`
	Name    string `json:"name"`
}

type targetUpdateRequest struct {
	Name *string `json:"name"`
}

// botSavedView answers a bot saved, with whether the platform verified
// its credentials.
type botSavedView struct {
	Bot      botView `json:"bot"`
	Verified bool    `json:"verified"`
}

type verifiedView struct {
	Verified bool `json:"verified"`
}

type canceledView struct {
	Canceled int `json:"canceled"`
}

// orTrue is an optional flag that defaults to true.
func orTrue(b *bool) bool { return b == nil || *b }

func (s *Server) listBots(w http.ResponseWriter, req bunrouter.Request) error {
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	acct, err := accountParam(req)
	if err != nil {
		return err
	}
	page, err := s.eng.Bots().List(req.Context(), principal(req), push.BotFilter{AccountID: acct, Limit: limit, Cursor: cursor})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", pageView(page, newBotView))
	return nil
}

func (s *Server) createBot(w http.ResponseWriter, req bunrouter.Request) error {
	var body botCreateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	p := principal(req)
	if body.AccountID == 0 {
		body.AccountID = p.AccountID
	}
	ctx := req.Context()
	verified := false
	if orTrue(body.Verify) {
		var err error
		if verified, err = s.eng.Bots().Check(ctx, p, body.Platform, body.Config); err != nil {
			return err
		}
	}
	b, err := s.eng.Bots().Create(ctx, p, push.Bot{AccountID: body.AccountID, Platform: body.Platform, Name: body.Name, Config: body.Config})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "", botSavedView{Bot: newBotView(b), Verified: verified})
	return nil
}

func (s *Server) getBot(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	b, err := s.eng.Bots().Get(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newBotView(b))
	return nil
}

func (s *Server) updateBot(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	var body botUpdateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	if body.Name == nil && body.Config == nil {
		return push.Errorf(push.Invalid, "nothing_to_change", "give a new name, a new config, or both")
	}
	verify := orTrue(body.Verify) && body.Config != nil
	b, err := s.eng.Bots().Update(req.Context(), principal(req), id, push.BotUpdate{Name: body.Name, Config: body.Config, Verify: verify})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", botSavedView{Bot: newBotView(b), Verified: verify && s.verifies(b.Platform)})
	return nil
}

// verifies reports whether a platform can verify credentials.
func (s *Server) verifies(platform string) bool {
	p, ok := s.eng.Platform(platform)
	if !ok {
		return false
	}
	_, v := p.(push.Verifier)
	return v
}

func (s *Server) deleteBot(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	n, err := s.eng.Bots().Delete(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the bot was deleted; its queued jobs were canceled and their points returned", canceledView{Canceled: n})
	return nil
}

func (s *Server) verifyBot(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	ok, err := s.eng.Bots().Verify(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	msg := "the platform accepted the credentials"
	if !ok {
		msg = "this platform cannot verify credentials without sending: the config's form was checked when it was saved"
	}
	writeOK(w, http.StatusOK, msg, verifiedView{Verified: ok})
	return nil
}

func (s *Server) listTargets(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	page, err := s.eng.Targets().List(req.Context(), principal(req), push.TargetFilter{BotID: id, Limit: limit, Cursor: cursor})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", pageView(page, newTargetView))
	return nil
}

func (s *Server) bindTarget(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	var body targetBindRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	t, err := s.eng.Targets().Bind(req.Context(), principal(req), push.Target{BotID: id, Type: push.TargetType(body.Type), Address: body.Address, Name: body.Name})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "", newTargetView(t))
	return nil
}

func (s *Server) getTarget(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "target")
	if err != nil {
		return err
	}
	t, err := s.eng.Targets().Get(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newTargetView(t))
	return nil
}

func (s *Server) updateTarget(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "target")
	if err != nil {
		return err
	}
	var body targetUpdateRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return push.Errorf(push.Invalid, "nothing_to_change", "give a new name")
	}
	t, err := s.eng.Targets().Update(req.Context(), principal(req), id, push.TargetUpdate{Name: body.Name})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newTargetView(t))
	return nil
}

func (s *Server) unbindTarget(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "target")
	if err != nil {
		return err
	}
	n, err := s.eng.Targets().Unbind(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the target was unbound; its queued jobs were canceled and their points returned", canceledView{Canceled: n})
	return nil
}

// botSection is bots and their targets.
func (s *Server) botSection() section {
	exBot := map[string]any{"id": 1, "accountId": 1, "platform": "telegram", "name": "alerts", "createdAt": exTime, "updatedAt": nil}
	routes := []Route{
		{Method: http.MethodGet, Path: managePrefix + "/bots", Summary: "List bots", Auth: true, Browser: true, Doc: Doc{
			ID: "listBots", Tag: "bots", Params: append([]Param{accountQuery()}, pageParams()...),
			Description: "An account's bots, newest first. No answer shows a bot's credentials.",
			Answers:     []Answer{okAnswer(200, "A page of bots.", "BotListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listBots},
		{Method: http.MethodPost, Path: managePrefix + "/bots", Summary: "Make a bot", Auth: true, Browser: true, Doc: Doc{
			ID: "createBot", Tag: "bots", Body: "BotCreateRequest",
			Description: "Makes a bot on a platform with its config (credentials and options; see GET /api/manage/v1/platforms). " +
				"Unless verify is false, the platform is first asked to verify the credentials with its cheapest authenticated call (Telegram's getMe, a token fetch): " +
				"credentials it refuses are 400 credentials_refused, and nothing is saved.",
			BodyExample: map[string]any{"platform": "telegram", "name": "alerts", "config": map[string]any{"token": "123456789:AA…"}},
			Answers: []Answer{okAnswer(201, "The bot, and whether the platform verified its credentials.", "BotSavedResponse",
				map[string]any{"code": 0, "message": "", "data": map[string]any{"bot": exBot, "verified": true}})},
			Errors: []int{400, 404, 413},
		}, Handler: s.createBot},
		{Method: http.MethodGet, Path: managePrefix + "/bots/:id", Summary: "Show a bot", Auth: true, Browser: true, Doc: Doc{
			ID: "getBot", Tag: "bots", Params: []Param{idParam("bot")}, Description: "A bot of your account (operators: any); never its credentials.",
			Answers: []Answer{okAnswer(200, "The bot.", "BotResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getBot},
		{Method: http.MethodPatch, Path: managePrefix + "/bots/:id", Summary: "Rename a bot or replace its credentials", Auth: true, Browser: true, Doc: Doc{
			ID: "updateBot", Tag: "bots", Params: []Param{idParam("bot")}, Body: "BotUpdateRequest",
			Description: "Renames a bot and/or replaces its whole config, keeping its id, targets and jobs. New credentials are verified first (unless verify is false) " +
				"and are used for the next platform call on every node within a second; sends under way finish with the old ones.",
			BodyExample: map[string]any{"config": map[string]any{"token": "123456789:BB…"}},
			Answers:     []Answer{okAnswer(200, "The bot.", "BotSavedResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.updateBot},
		{Method: http.MethodDelete, Path: managePrefix + "/bots/:id", Summary: "Delete a bot", Auth: true, Browser: true, Doc: Doc{
			ID: "deleteBot", Tag: "bots", Params: []Param{idParam("bot")},
			Description: "Deletes a bot: its queued jobs are canceled and their points returned (once), its running jobs finish, its credentials are erased, " +
				"and sends to it are 404 from then on, on every node. Its finished jobs keep their history.",
			Answers: []Answer{okAnswer(200, "Deleted, with the number of queued jobs canceled.", "CanceledResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.deleteBot},
		{Method: http.MethodPost, Path: managePrefix + "/bots/:id/verify", Summary: "Verify a bot's credentials", Auth: true, Browser: true, Doc: Doc{
			ID: "verifyBot", Tag: "bots", Params: []Param{idParam("bot")},
			Description: "Asks the platform whether the bot's saved credentials still work, with its cheapest authenticated call; nothing is sent to a target.",
			Answers:     []Answer{okAnswer(200, "Verified (or the platform cannot verify: verified false).", "VerifiedResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.verifyBot},
		{Method: http.MethodGet, Path: managePrefix + "/bots/:id/targets", Summary: "List a bot's targets", Auth: true, Browser: true, Doc: Doc{
			ID: "listTargets", Tag: "bots", Params: append([]Param{idParam("bot")}, pageParams()...), Description: "The bot's bound targets, newest first.",
			Answers: []Answer{okAnswer(200, "A page of targets.", "TargetListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listTargets},
		{Method: http.MethodPost, Path: managePrefix + "/bots/:id/targets", Summary: "Bind a target", Auth: true, Browser: true, Doc: Doc{
			ID: "bindTarget", Tag: "bots", Params: []Param{idParam("bot")}, Body: "TargetBindRequest",
			Description: "Binds a user or a group of the platform to the bot, by the platform's id of it. Binding the address of an unbound target binds it again, with its id.",
			BodyExample: map[string]any{"type": "user", "address": "123456789", "name": "Ada"},
			Answers:     []Answer{okAnswer(201, "The target.", "TargetResponse", nil)}, Errors: []int{400, 404, 409, 413},
		}, Handler: s.bindTarget},
		{Method: http.MethodGet, Path: managePrefix + "/targets/:id", Summary: "Show a target", Auth: true, Browser: true, Doc: Doc{
			ID: "getTarget", Tag: "bots", Params: []Param{idParam("target")}, Description: "A target of one of your bots.",
			Answers: []Answer{okAnswer(200, "The target.", "TargetResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.getTarget},
		{Method: http.MethodPatch, Path: managePrefix + "/targets/:id", Summary: "Rename a target", Auth: true, Browser: true, Doc: Doc{
			ID: "updateTarget", Tag: "bots", Params: []Param{idParam("target")}, Body: "TargetUpdateRequest", Description: "Renames a target.",
			BodyExample: map[string]any{"name": "Ada (on call)"},
			Answers:     []Answer{okAnswer(200, "The target.", "TargetResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.updateTarget},
		{Method: http.MethodDelete, Path: managePrefix + "/targets/:id", Summary: "Unbind a target", Auth: true, Browser: true, Doc: Doc{
			ID: "unbindTarget", Tag: "bots", Params: []Param{idParam("target")},
			Description: "Unbinds a target: its queued jobs are canceled and their points returned (once), its running jobs finish, and sends to it are 404 (on other nodes within a second).",
			Answers:     []Answer{okAnswer(200, "Unbound, with the number of queued jobs canceled.", "CanceledResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.unbindTarget},
	}
	config := Schema{"type": "object", "description": "The platform's config: credentials and options, as GET /api/manage/v1/platforms and the setup guides describe. Never shown again."}
	return section{
		tags:   []openAPITag{{"bots", "Bots, their credentials, and the targets bound to them."}},
		routes: routes,
		schemas: map[string]Schema{
			"BotCreateRequest": object("", false,
				opt("accountId", idField("The bot's account (default: yours).")),
				req("platform", str("The platform, e.g. telegram.")),
				req("name", str("A name for the bot.")),
				req("config", config),
				opt("verify", boolean("Verify the credentials with the platform before saving (default true)."))),
			"BotUpdateRequest": object("", false,
				opt("name", str("The new name.")),
				opt("config", config.with("description", "The whole new config; it replaces the old one.")),
				opt("verify", boolean("Verify the new credentials with the platform before saving (default true)."))),
			"BotSaved": object("A saved bot.", true,
				req("bot", ref("Bot")),
				req("verified", boolean("True when the platform verified the credentials; false when it was not asked, or cannot be."))),
			"BotSavedResponse": manageEnvelope("The bot.", "BotSaved"),
			"Verified": object("The answer of a verification.", true,
				req("verified", boolean("True when the platform accepted the credentials; false when it cannot verify them."))),
			"VerifiedResponse": manageEnvelope("The verification.", "Verified"),
			"Canceled": object("What a delete or an unbind canceled.", true,
				req("canceled", countOf("Queued jobs canceled (their points returned)."))),
			"CanceledResponse": manageEnvelope("Done.", "Canceled"),
			"TargetBindRequest": object("", false,
				req("type", str("user or group.").with("enum", []string{"user", "group"})),
				req("address", str("The platform's id of the user or group (a chat id, an open id, …).")),
				opt("name", str("A name to tell it apart (default: the address)."))),
			"TargetUpdateRequest": object("", false,
				req("name", str("The new name."))),
		},
	}
}
