package transport

import (
	"encoding/json"
	"net/http"
	"time"

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
	return writePage(w, page, err, newBotView)
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
	b, verified, err := s.eng.Bots().UpdateVerified(req.Context(), principal(req), id, push.BotUpdate{Name: body.Name, Config: body.Config, Verify: verify})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", botSavedView{Bot: newBotView(b), Verified: verified})
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
	return writePage(w, page, err, newTargetView)
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
				"credentials it refuses are 400 credentials_refused, a platform that cannot be asked is 503 platform_unreachable, and in both cases nothing is saved. " +
				"Platforms with no such call (push relays, WeCom robots) answer verified false.",
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
			Description: "Renames a bot and/or replaces its whole config, keeping its id, targets and jobs. New credentials are verified first (unless verify is false; " +
				"400 credentials_refused or 503 platform_unreachable change nothing) " +
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
	routes = append(routes, s.bindCodeRoutes()...)
	config := Schema{"type": "object", "description": "The platform's config: credentials and options, as GET /api/manage/v1/platforms and the setup guides describe. Never shown again."}
	return section{
		tags:   []openAPITag{{"bots", "Bots, their credentials, and the targets bound to them."}},
		routes: routes,
		schemas: map[string]Schema{
			"BotCreateRequest": object("", false,
				opt("accountId", idField("The bot's account (default: yours).")),
				req("platform", str("The platform, e.g. telegram.")),
				req("name", str("A name for the bot.").with("maxLength", push.MaxName)),
				req("config", config),
				opt("verify", boolean("Verify the credentials with the platform before saving (default true)."))),
			"BotUpdateRequest": object("", false,
				opt("name", str("The new name.").with("maxLength", push.MaxName)),
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
				opt("name", str("A name to tell it apart (default: the address).").with("maxLength", push.MaxName))),
			"TargetUpdateRequest": object("", false,
				req("name", str("The new name.").with("maxLength", push.MaxName))),
			"BindCodeRequest": object("", false,
				opt("type", str("The chats it binds: user or group (default either).").with("enum", []string{"", "user", "group"})),
				opt("expiresAt", timeField("When it expires (default: in a day; at most 30 days)")),
				opt("uses", integer("Chats it can bind (default 1).").with("minimum", 0, "maximum", 1000))),
			"NewBindCode": object("A new bind code.", true,
				req("bindCode", ref("BindCode")),
				req("code", str("The code: shown once.")),
				req("command", str("What to send to the bot: bind <code>.")),
				req("link", str("A link that sends the code for the person (Telegram's deep link); empty where the platform has none.")),
				req("qrUrl", str("A QR code that binds on scan (a WeChat service account's); empty where the platform has none."))),
			"NewBindCodeResponse": manageEnvelope("The bind code.", "NewBindCode"),
		},
	}
}

type bindCodeRequest struct {
	Type      string     `json:"type"`
	ExpiresAt *time.Time `json:"expiresAt"`
	Uses      int        `json:"uses"`
}

// createdBindCodeView answers a new bind code: the code (shown once) and
// what a person does with it.
type createdBindCodeView struct {
	BindCode bindCodeView `json:"bindCode"`
	Code     string       `json:"code"`
	Command  string       `json:"command"`
	Link     string       `json:"link"`
	QRURL    string       `json:"qrUrl"`
}

func (s *Server) createBindCode(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	var body bindCodeRequest
	if err := s.decodeStrict(w, req, &body); err != nil {
		return err
	}
	ttl, err := ttlUntil(body.ExpiresAt, time.Now(), "bind code")
	if err != nil {
		return err
	}
	c, err := s.eng.BindCodes().Create(req.Context(), principal(req), push.BindCodeCreate{BotID: id, Type: push.TargetType(body.Type), TTL: ttl, Uses: body.Uses})
	if err != nil {
		return err
	}
	writeOK(w, http.StatusCreated, "give the code to the person: it is shown once", createdBindCodeView{BindCode: newBindCodeView(c.BindCode),
		Code: c.Code, Command: c.Command, Link: c.Link.URL, QRURL: c.Link.QRURL})
	return nil
}

func (s *Server) listBindCodes(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	limit, cursor, err := listParams(req)
	if err != nil {
		return err
	}
	page, err := s.eng.BindCodes().List(req.Context(), principal(req), push.BindCodeFilter{BotID: id, Limit: limit, Cursor: cursor})
	return writePage(w, page, err, newBindCodeView)
}

func (s *Server) revokeBindCode(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bind code")
	if err != nil {
		return err
	}
	c, err := s.eng.BindCodes().Revoke(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "the bind code was revoked", newBindCodeView(c))
	return nil
}

func (s *Server) botStatus(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathID(req, "bot")
	if err != nil {
		return err
	}
	st, err := s.eng.Events().Status(req.Context(), principal(req), id)
	if err != nil {
		return err
	}
	writeOK(w, http.StatusOK, "", newReceiverView(st))
	return nil
}

// bindCodeRoutes are the bind codes of a bot and its receiver's status.
func (s *Server) bindCodeRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: managePrefix + "/bots/:id/bindcodes", Summary: "Make a bind code", Auth: true, Browser: true, Doc: Doc{
			ID: "createBindCode", Tag: "bots", Params: []Param{idParam("bot")}, Body: "BindCodeRequest",
			Description: "Makes a one-time code that binds a chat as a target of the bot: a person sends \"bind <code>\" to the bot (in a group, mentioning it), " +
				"or follows the platform's link (Telegram's t.me deep link; a WeChat QR code where the account may make one). " +
				"The private chat becomes a user target, a group a group target; the bot answers in the chat. The bot must hear its users (its config's receive setting).",
			BodyExample: map[string]any{"type": "user"},
			Answers:     []Answer{okAnswer(201, "The code (shown once) and how to use it.", "NewBindCodeResponse", nil)}, Errors: []int{400, 404, 413},
		}, Handler: s.createBindCode},
		{Method: http.MethodGet, Path: managePrefix + "/bots/:id/bindcodes", Summary: "List a bot's bind codes", Auth: true, Browser: true, Doc: Doc{
			ID: "listBindCodes", Tag: "bots", Params: append([]Param{idParam("bot")}, pageParams()...), Description: "The bot's bind codes, newest first.",
			Answers: []Answer{okAnswer(200, "A page of bind codes.", "BindCodeListResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.listBindCodes},
		{Method: http.MethodDelete, Path: managePrefix + "/bindcodes/:id", Summary: "Revoke a bind code", Auth: true, Browser: true, Doc: Doc{
			ID: "revokeBindCode", Tag: "bots", Params: []Param{idParam("bind code")}, Description: "Revokes a bind code: it binds nothing more.",
			Answers: []Answer{okAnswer(200, "The revoked code.", "BindCodeResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.revokeBindCode},
		{Method: http.MethodGet, Path: managePrefix + "/bots/:id/status", Summary: "How a bot hears its users", Auth: true, Browser: true, Doc: Doc{
			ID: "botStatus", Tag: "bots", Params: []Param{idParam("bot")},
			Description: "The bot's receiver (mode, running, failures, last event), and its targets: how many, how many are gone, how many a send can reach now.",
			Answers:     []Answer{okAnswer(200, "The status.", "ReceiverStatusResponse", nil)}, Errors: []int{400, 404},
		}, Handler: s.botStatus},
	}
}
