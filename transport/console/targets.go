package console

import (
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/push"
)

// Targets: every bot's targets, rename, unbind, and binding by invite.
func (c *Console) targetRoutes() {
	c.handle("GET /targets", c.page(c.targetsPage))
	c.handle("POST /targets/{id}/rename", c.page(c.renameTarget))
	c.handle("POST /targets/{id}/unbind", c.page(c.unbindTarget))
	c.handle("POST /bots/{id}/bind", c.page(c.createBindCode))
	c.handle("GET /binds/{id}", c.page(c.bindPage))
	c.handle("GET /binds/{id}/status", c.page(c.bindStatus))
	c.handle("POST /binds/{id}/revoke", c.page(c.revokeBindCode))
	c.handle("POST /bots/{id}/test", c.page(c.sendTest))
	c.handle("POST /bots/{id}/targets", c.page(c.bindAddress))
}

// botTargets is a bot with its targets.
type botTargets struct {
	Bot     push.Bot
	Targets []push.Target
	Binds   bool
}

// targetsView is every bot's targets.
type targetsView struct {
	*frame
	Bots []botTargets
}

func (c *Console) targetsPage(q *request) error {
	ctx := q.r.Context()
	bots, err := c.eng.Bots().List(ctx, q.p, push.BotFilter{AccountID: q.p.AccountID, Limit: push.MaxPageSize})
	if err != nil {
		return err
	}
	v := &targetsView{frame: c.newFrame(q, "targets.title", "targets")}
	for _, b := range bots.Items {
		pl, ok := c.eng.Platform(b.Platform)
		if !ok || !pl.Info().Targets {
			continue
		}
		b.Config = nil
		ts, err := c.eng.Targets().List(ctx, q.p, push.TargetFilter{BotID: b.ID, Limit: push.MaxPageSize})
		if err != nil {
			return err
		}
		_, binds := pl.(push.EventSource)
		v.Bots = append(v.Bots, botTargets{Bot: b, Targets: ts.Items, Binds: binds})
	}
	return c.render(q, http.StatusOK, "targets", v)
}

// target reads the page's target, of a bot of the session's account.
func (c *Console) target(q *request) (push.Target, error) {
	id, err := pathID(q, "target")
	if err != nil {
		return push.Target{}, err
	}
	return c.eng.Targets().Get(q.r.Context(), q.p, id)
}

func (c *Console) renameTarget(q *request) error {
	t, err := c.target(q)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(q.r.PostFormValue("name"))
	if _, err := c.eng.Targets().Update(q.r.Context(), q.p, t.ID, push.TargetUpdate{Name: &name}); err != nil {
		return err
	}
	return q.redirect("/targets", "target_renamed")
}

func (c *Console) unbindTarget(q *request) error {
	t, err := c.target(q)
	if err != nil {
		return err
	}
	if _, err := c.eng.Targets().Unbind(q.r.Context(), q.p, t.ID); err != nil {
		return err
	}
	return q.redirect("/targets", "target_unbound")
}

// bindView is an invite to bind a chat: the code (shown once, on the page
// that made it), the platform's link and its QR code; then whether it
// bound.
type bindView struct {
	*frame
	Bot     push.Bot
	Code    push.BindCode
	Plain   string // the code itself; empty after the page that made it
	Command string
	Link    string
	QR      template.HTML
	Bound   bool
	Target  push.Target
}

func (c *Console) createBindCode(q *request) error {
	id, err := pathID(q, "bot")
	if err != nil {
		return err
	}
	ctx := q.r.Context()
	b, err := c.eng.Bots().Get(ctx, q.p, id)
	if err != nil {
		return err
	}
	b.Config = nil
	tt := push.TargetType(q.r.PostFormValue("type"))
	nc, err := c.eng.BindCodes().Create(ctx, q.p, push.BindCodeCreate{BotID: b.ID, Type: tt})
	if err != nil {
		return err
	}
	v := &bindView{frame: c.newFrame(q, "bind.title", "targets"), Bot: b, Code: nc.BindCode, Plain: nc.Code, Command: nc.Command, Link: nc.Link.URL}
	if v.Link != "" {
		if v.QR, err = qrSVG(v.Link, q.lang.t("bind.qr_alt")); err != nil {
			return err
		}
	}
	return c.render(q, http.StatusOK, "bind", v)
}

// bindCode reads the page's bind code and its bot.
func (c *Console) bindCode(q *request) (*bindView, error) {
	id, err := pathID(q, "invite")
	if err != nil {
		return nil, err
	}
	ctx := q.r.Context()
	bc, err := c.eng.BindCodes().Get(ctx, q.p, id)
	if err != nil {
		return nil, err
	}
	b, err := c.eng.Bots().Get(ctx, q.p, bc.BotID)
	if err != nil {
		return nil, err
	}
	b.Config = nil
	v := &bindView{frame: c.newFrame(q, "bind.title", "targets"), Bot: b, Code: bc}
	if bc.LastTargetID != 0 {
		if t, err := c.eng.Targets().Get(ctx, q.p, bc.LastTargetID); err == nil {
			v.Bound, v.Target = true, t
		}
	}
	return v, nil
}

func (c *Console) bindPage(q *request) error {
	v, err := c.bindCode(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "bind", v)
}

// bindStatus answers the bind page's script: whether the invite bound a
// chat yet, and the words to say so.
func (c *Console) bindStatus(q *request) error {
	v, err := c.bindCode(q)
	if err != nil {
		return err
	}
	out := map[string]any{"bound": v.Bound}
	if v.Bound {
		out["text"] = q.lang.t("bind.bound", targetLabel(v.Target))
		out["target"] = v.Target.ID
	}
	q.w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(q.w).Encode(out)
}

// targetLabel names a target: its name, else its type and address.
func targetLabel(t push.Target) string {
	if t.Name != "" {
		return t.Name
	}
	return string(t.Type) + " " + t.Address
}

// TargetLabel names the bound target.
func (v *bindView) TargetLabel() string { return targetLabel(v.Target) }

// sendTest sends a short text to a target of the bot (or, on a platform
// without targets, to the bot's destination), charged as any send, then
// shows its job. The form's nonce is the request's idempotency key: the
// same form sent twice (a reload, a double click) sends once.
func (c *Console) sendTest(q *request) error {
	id, err := pathID(q, "bot")
	if err != nil {
		return err
	}
	var target int64
	if v := q.r.PostFormValue("target"); v != "" {
		if target, err = optionalID(v, q.lang.t("jobs.target")); err != nil {
			return err
		}
	}
	nonce := q.r.PostFormValue("nonce")
	if len(nonce) != 32 {
		return push.Errorf(push.Invalid, "form_expired", "this form is out of date: reload the page and send it again")
	}
	res, err := c.eng.Send(q.r.Context(), q.p, push.SendRequest{BotID: id, TargetID: target,
		Message: push.Message{Type: push.MsgTypeText, Content: q.lang.t("test.text")}, IdempotencyKey: "console-test-" + nonce})
	if err != nil {
		return err
	}
	return q.redirect("/jobs/"+res.Jobs[0].ID, "test_sent")
}

func (c *Console) revokeBindCode(q *request) error {
	id, err := pathID(q, "invite")
	if err != nil {
		return err
	}
	bc, err := c.eng.BindCodes().Revoke(q.r.Context(), q.p, id)
	if err != nil {
		return err
	}
	return q.redirect(botPath(bc.BotID), "bind_revoked")
}

// bindAddress binds a target by its address on the platform (a chat id),
// for bots that do not hear their users.
func (c *Console) bindAddress(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	t, err := c.eng.Targets().Bind(q.r.Context(), q.p, push.Target{BotID: v.Bot.ID, Type: push.TargetType(q.r.PostFormValue("type")),
		Address: strings.TrimSpace(q.r.PostFormValue("address")), Name: strings.TrimSpace(q.r.PostFormValue("name"))})
	if err != nil {
		v.BindAddress, v.BindName = q.r.PostFormValue("address"), q.r.PostFormValue("name")
		return c.formError(q, "bot", v, &v.Error, err)
	}
	return q.redirect("/targets#target-"+strconv.FormatInt(t.ID, 10), "target_bound")
}
