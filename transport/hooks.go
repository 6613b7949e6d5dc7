package transport

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// maxHookBody caps a webhook request's body: platforms' events are small.
const maxHookBody = 1 << 20

// hook answers a platform's request to a bot's webhook. The request
// authenticates itself with the platform's signature, which the platform
// checks before it parses anything; the answer is in the platform's own
// format (its handshakes, a passive reply).
func (s *Server) hook(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := strconv.ParseInt(req.Param("bot"), 10, 64)
	if err != nil || id <= 0 {
		writeHook(w, push.WebhookRefused())
		return nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxHookBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{http.StatusRequestEntityTooLarge, "body_too_large", "the request body is larger than a platform's event"}
		}
		return push.Errorf(push.Invalid, "unreadable_body", "the request body could not be read: %v", err)
	}
	resp := s.eng.Events().Webhook(req.Context(), id, push.WebhookRequest{
		Method: req.Method, Query: req.URL.Query(), Header: req.Header, Body: body})
	if resp.Status >= 400 {
		infoOf(req.Context()).reason = "webhook_refused"
	}
	writeHook(w, resp)
	return nil
}

func writeHook(w http.ResponseWriter, r push.WebhookResponse) {
	h := w.Header()
	ct := r.ContentType
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-store")
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(r.Body)
}

// hookSection is the bots' webhooks, which platforms call.
func (s *Server) hookSection() section {
	param := Param{Name: "bot", In: "path", Required: true, Description: "The bot's id.", Schema: integer("").with("minimum", 1), Example: "1"}
	doc := func(id, method string) Doc {
		return Doc{ID: id, Tag: "hooks", Params: []Param{param},
			Description: "The webhook of a bot whose config takes events by webhook: the platform (not you) calls it. " +
				"Each request is verified with the platform's signature or secret before anything in it is read; one that does not verify, " +
				"and one for an unknown bot, is 401 bad_signature. The answer is in the platform's own format (its URL check, a passive reply). " +
				"Give the platform " + method + " {public URL}/api/hooks/{bot}.",
			Answers: []Answer{
				{Status: 200, Description: "Handled: the platform's answer (empty, its handshake, or a passive reply), in the platform's format.", ContentType: "*/*"},
				{Status: 401, Description: "The request does not verify (or the bot does not take webhooks).", Schema: "Error"},
			},
			Errors: []int{413}}
	}
	return section{
		tags: []openAPITag{{"hooks", "The bots' webhooks: where platforms push the events of bots that listen by webhook."}},
		routes: []Route{
			{Method: http.MethodPost, Path: BasePath + "/hooks/:bot", Summary: "A bot's webhook (platforms call it)", Doc: doc("hookPost", "POST"), Handler: s.hook},
			{Method: http.MethodGet, Path: BasePath + "/hooks/:bot", Summary: "A bot's webhook check (platforms call it)", Doc: doc("hookGet", "GET"), Handler: s.hook},
		},
	}
}
