package transport_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// FuzzRequestDecoders sends arbitrary bodies and Idempotency-Keys to every
// endpoint through the real handler and engine, and checks that each answer
// is a well-formed envelope that the OpenAPI document allows (status,
// headers and body): bad input is always a 4xx, never a 500 or a panic.
func FuzzRequestDecoders(f *testing.F) {
	paths := []string{"/openapi/v1/push/private", "/openapi/send", "/openapi/batch-send", "/openapi/v1/push/batch",
		"/openapi/queue/", "/openapi/queue-request?key=", "/openapi/queue/x/cancel"}
	seeds := []struct {
		path byte
		body string
		key  string
	}{
		{0, `{"botId":1,"target":"1","content":"hi"}`, "k1"},
		{0, `{"botId":1,"target":"1","msgType":7,"imageUrl":"https://e.com/a.png"}`, ""},
		{1, `{"bot_id":1,"target_id":1,"content":"hi","msg_type":2}`, ""},
		{2, `{"bot_id":1,"target_ids":[1,1],"content":"x"}`, "k:2"},
		{3, `{"bots":[{"botId":1,"targets":["1"]},{"bot_id":1,"targets":["x"]}],"content":"x"}`, ""},
		{0, `{"botId":1e400}`, ""},
		{0, `[[[[[[[[[[[[[[[[[[[[`, ""},
		{3, `{"bots":null}`, "bad key"},
		{4, ``, ""},
		{5, ``, "a b"},
	}
	for _, s := range seeds {
		f.Add(s.path, []byte(s.body), s.key)
	}
	h := testkit.New(f, testkit.WithoutStart(), testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, RatePerMinute: -1}))
	fx := h.Seed(f)
	handler := h.API
	contract := h.Contract(f)
	f.Fuzz(func(t *testing.T, pathIndex byte, body []byte, key string) {
		path := paths[int(pathIndex)%len(paths)]
		method := http.MethodPost
		switch path {
		case "/openapi/queue/":
			method, path = http.MethodGet, path+url.PathEscape(key)
		case "/openapi/queue-request?key=":
			method, path = http.MethodGet, path+url.QueryEscape(key)
		}
		req := httptest.NewRequest(method, "/api"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.Key)
		if key != "" && method == http.MethodPost {
			req.Header["Idempotency-Key"] = []string{key}
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 202, 400, 404, 409, 413, 429:
		default:
			t.Fatalf("%s %s %q (key %q): status %d: %s", method, path, body, key, rec.Code, rec.Body)
		}
		var env struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Code == nil || env.Message == nil {
			t.Fatalf("answer is not an envelope: %s", rec.Body)
		}
		if rec.Code >= 400 && (*env.Code != rec.Code || *env.Message == "") {
			t.Fatalf("refusal without code or message: %d %s", rec.Code, rec.Body)
		}
		if err := contract.Check(req, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			t.Fatalf("%s %s %q (key %q): the answer does not match the OpenAPI document: %v\n%d %s", method, path, body, key, err, rec.Code, rec.Body)
		}
	})
}
