package console

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/push"
)

// Bots: the list, a new bot from its platform's fields, a bot's page
// (rename, verify, new credentials, delete).
func (c *Console) botRoutes() {
	c.handle("GET /bots", c.page(c.botsPage))
	c.handle("GET /bots/new", c.page(c.newBotPage))
	c.handle("POST /bots", c.page(c.createBot))
	c.handle("GET /bots/{id}", c.page(c.botPage))
	c.handle("POST /bots/{id}/rename", c.page(c.renameBot))
	c.handle("POST /bots/{id}/verify", c.page(c.verifyBot))
	c.handle("POST /bots/{id}/credentials", c.page(c.replaceCredentials))
	c.handle("POST /bots/{id}/delete", c.page(c.deleteBot))
}

// field is a config field on a form, never holding a secret's value.
type field struct {
	push.ConfigField
	Label, Help string // in the page's language
	Value       string // what the person typed, shown again on a refusal unless Secret
}

// platformForm is a platform's fields for a form; Raw is true for a
// platform that does not describe its fields (the config is typed as JSON).
type platformForm struct {
	Name   string
	Fields []field
	Raw    bool
	Guide  string
}

func (c *Console) platformForm(q *request, name string, values map[string]string) (platformForm, bool) {
	pl, ok := c.eng.Platform(name)
	if !ok {
		return platformForm{}, false
	}
	f := platformForm{Name: name}
	d, ok := pl.(push.ConfigDescriber)
	if !ok {
		f.Raw = true
		return f, true
	}
	f.Guide = d.SetupGuide()
	for _, cf := range d.ConfigFields() {
		fd := field{ConfigField: cf, Label: cf.Label, Help: cf.Help}
		if k := "field." + name + "." + cf.Name; q.lang.has(k + ".label") {
			fd.Label, fd.Help = q.lang.t(k+".label"), q.lang.t(k+".help")
		}
		if !cf.Secret {
			fd.Value = values[cf.Name]
		}
		f.Fields = append(f.Fields, fd)
	}
	return f, true
}

// configOf builds a bot's config from a form: the described fields that
// were filled in, or the raw JSON.
func configOf(q *request, f platformForm) (json.RawMessage, map[string]string, error) {
	if f.Raw {
		raw := strings.TrimSpace(q.r.PostFormValue("config"))
		if !json.Valid([]byte(raw)) || !strings.HasPrefix(raw, "{") {
			return nil, nil, push.Errorf(push.Invalid, "invalid_config", "%s", q.lang.t("error.config_json"))
		}
		return json.RawMessage(raw), nil, nil
	}
	cfg, values := map[string]any{}, map[string]string{}
	for _, fd := range f.Fields {
		v := strings.TrimSpace(q.r.PostFormValue("cfg." + fd.Name))
		values[fd.Name] = v
		if v == "" {
			continue
		}
		switch fd.Kind {
		case push.ConfigNumber:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, values, push.Errorf(push.Invalid, "invalid_config", "%s", q.lang.t("error.config_number", fd.Label))
			}
			cfg[fd.Name] = n
		case push.ConfigBool:
			cfg[fd.Name] = v == "true"
		case push.ConfigList:
			var items []string
			for _, it := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == ',' }) {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			cfg[fd.Name] = items
		default:
			cfg[fd.Name] = v
		}
	}
	raw, err := json.Marshal(cfg)
	return raw, values, err
}

// botsView is the list of bots and the platforms to make one on.
type botsView struct {
	*frame
	Bots      []push.Bot
	Next      string
	Platforms []string
}

func (c *Console) botsPage(q *request) error {
	pg, err := c.eng.Bots().List(q.r.Context(), q.p, push.BotFilter{AccountID: q.p.AccountID, Limit: 100, Cursor: q.r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "bots", &botsView{frame: c.newFrame(q, "bots.title", "bots"), Bots: pg.Items, Next: pg.Next, Platforms: c.eng.PlatformNames()})
}

// newBotView is the form of a new bot.
type newBotView struct {
	*frame
	Form   platformForm
	Name   string
	Config string
	Verify bool
	Error  string
}

func (c *Console) newBotPage(q *request) error {
	name := q.r.URL.Query().Get("platform")
	f, ok := c.platformForm(q, name, nil)
	if !ok {
		return push.Errorf(push.NotFound, "platform_not_found", "there is no platform %q on this server: choose one from the list of bots", truncate(name, 40))
	}
	return c.render(q, http.StatusOK, "botnew", &newBotView{frame: c.newFrame(q, "botnew.title", "bots"), Form: f, Verify: true})
}

func (c *Console) createBot(q *request) error {
	name := q.r.PostFormValue("platform")
	f, ok := c.platformForm(q, name, nil)
	if !ok {
		return push.Errorf(push.Invalid, "unknown_platform", "there is no platform %q on this server: choose one from the list of bots", truncate(name, 40))
	}
	raw, values, err := configOf(q, f)
	v := &newBotView{frame: c.newFrame(q, "botnew.title", "bots"), Name: q.r.PostFormValue("name"), Verify: q.r.PostFormValue("verify") != ""}
	v.Form, _ = c.platformForm(q, name, values)
	if err != nil {
		return c.formError(q, "botnew", v, &v.Error, err)
	}
	ctx := q.r.Context()
	if v.Verify {
		if _, err := c.eng.Bots().Check(ctx, q.p, name, raw); err != nil {
			return c.formError(q, "botnew", v, &v.Error, err)
		}
	}
	b, err := c.eng.Bots().Create(ctx, q.p, push.Bot{AccountID: q.p.AccountID, Platform: name, Name: v.Name, Config: raw})
	if err != nil {
		return c.formError(q, "botnew", v, &v.Error, err)
	}
	return q.redirect("/bots/"+strconv.FormatInt(b.ID, 10), "bot_created")
}

// botView is a bot's page. It never holds the bot's config.
type botView struct {
	*frame
	Bot        push.Bot
	Form       platformForm
	Targets    []push.Target
	Binds      bool // its platform binds chats by invite
	HasTargets bool // its platform sends to targets (else to the bot's one destination)
	Error      string
	Codes      []push.BindCode // the bot's invites that can still bind
	Types      []push.TargetType
	// BindAddress and BindName are what was typed in the form that binds
	// by address, shown again on a refusal.
	BindAddress, BindName string
}

func (c *Console) botView(q *request) (*botView, error) {
	id, err := pathID(q, "bot")
	if err != nil {
		return nil, err
	}
	ctx := q.r.Context()
	b, err := c.eng.Bots().Get(ctx, q.p, id)
	if err != nil {
		return nil, err
	}
	b.Config = nil // never rendered, not even by mistake
	v := &botView{frame: c.newFrame(q, "bot.title", "bots"), Bot: b}
	v.Form, _ = c.platformForm(q, b.Platform, nil)
	pl, _ := c.eng.Platform(b.Platform)
	if pl != nil && pl.Info().Targets {
		v.HasTargets, v.Types = true, pl.Info().TargetTypes
		ts, err := c.eng.Targets().List(ctx, q.p, push.TargetFilter{BotID: b.ID, Limit: push.MaxPageSize})
		if err != nil {
			return nil, err
		}
		v.Targets = ts.Items
		_, v.Binds = pl.(push.EventSource)
	}
	if v.Binds {
		cs, err := c.eng.BindCodes().List(ctx, q.p, push.BindCodeFilter{BotID: b.ID, Limit: 100})
		if err != nil {
			return nil, err
		}
		now := time.Now()
		for _, bc := range cs.Items {
			if bc.Usable(now) {
				v.Codes = append(v.Codes, bc)
			}
		}
	}
	return v, nil
}

func (c *Console) botPage(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	return c.render(q, http.StatusOK, "bot", v)
}

func (c *Console) renameBot(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(q.r.PostFormValue("name"))
	if _, err := c.eng.Bots().Update(q.r.Context(), q.p, v.Bot.ID, push.BotUpdate{Name: &name}); err != nil {
		return c.formError(q, "bot", v, &v.Error, err)
	}
	return q.redirect(botPath(v.Bot.ID), "bot_renamed")
}

func (c *Console) verifyBot(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	if _, err := c.eng.Bots().Verify(q.r.Context(), q.p, v.Bot.ID); err != nil {
		return c.formError(q, "bot", v, &v.Error, err)
	}
	return q.redirect(botPath(v.Bot.ID), "bot_verified")
}

func (c *Console) replaceCredentials(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	raw, _, err := configOf(q, v.Form)
	if err == nil {
		_, err = c.eng.Bots().Update(q.r.Context(), q.p, v.Bot.ID, push.BotUpdate{Config: raw, Verify: q.r.PostFormValue("verify") != ""})
	}
	if err != nil {
		return c.formError(q, "bot", v, &v.Error, err)
	}
	return q.redirect(botPath(v.Bot.ID), "bot_credentials")
}

func (c *Console) deleteBot(q *request) error {
	v, err := c.botView(q)
	if err != nil {
		return err
	}
	if _, err := c.eng.Bots().Delete(q.r.Context(), q.p, v.Bot.ID); err != nil {
		return err
	}
	return q.redirect("/bots", "bot_deleted")
}

func botPath(id int64) string { return "/bots/" + strconv.FormatInt(id, 10) }
