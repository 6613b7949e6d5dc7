package transport_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

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

// FuzzStrictDecoder sends the send endpoints bodies with aliases, unknown
// fields, case variants, duplicate keys and invalid UTF-8, through the
// real handler and engine (points on). Every refusal is a 4xx JSON error
// envelope that charged nothing and queued nothing; and a body that is not
// valid UTF-8, or whose top-level object holds a field the endpoint does
// not take under any spelling or holds one twice, is always a 400.
func FuzzStrictDecoder(f *testing.F) {
	paths := []string{"/openapi/v1/push/private", "/openapi/send", "/openapi/batch-send", "/openapi/v1/push/batch"}
	single := []string{"botId", "bot_id", "target", "target_id", "content", "msgType", "msg_type", "imageUrl", "image_url", "targetType", "target_type", "isWakeup", "is_wakeup"}
	known := [][]string{single, single,
		{"bot_id", "botId", "target_ids", "targetIds", "content", "msg_type", "msgType", "image_url", "imageUrl"},
		{"bots", "content", "msgType", "msg_type", "imageUrl", "image_url"}}
	seeds := []struct {
		path byte
		body string
	}{
		{0, `{"botId":1,"target":"1","content":"hi","msg_type":2}`},
		{0, `{"botId":1,"target":"1","content":"hi","msgType":2,"msg_type":0}`},
		{0, `{"botId":1,"target":"1","content":"hi","MsgType":2}`},
		{0, `{"botId":1,"target":"1","content":"hi","content":"ho"}`},
		{0, `{"botId":1,"target":"1","contnet":"hi"}`},
		{0, "{\"botId\":1,\"target\":\"1\",\"content\":\"h\xffi\"}"},
		{0, `{"botId":1,"target":"1","content":"\ud800"}`},
		{0, `{"botId":1,"target":"1","content":"a\u0000"}`},
		{0, `{"botId":1,"target":"1","msgType":7,"content":"https://e.com/a.png"}`},
		{1, `{"bot_id":1,"target_id":1,"content":"hi","msgType":2,"targetType":"user"}`},
		{1, `{"bot_id":1,"target":"1","target_id":2,"content":"hi"}`},
		{2, `{"botId":1,"targetIds":[1],"content":"x","msg_type":2}`},
		{2, `{"bot_id":1,"target_ids":[1],"target_ids":[1],"content":"x"}`},
		{3, `{"bots":[{"bot_id":1,"targets":["1"],"Targets":["1"]}],"content":"x"}`},
		{3, `{"bots":[{"botId":1,"botId":1,"targets":["1"]}],"msg_type":0,"content":"x"}`},
	}
	for _, s := range seeds {
		f.Add(s.path, []byte(s.body))
	}
	h := testkit.New(f, testkit.WithoutStart(), testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: time.Millisecond, RatePerMinute: -1}))
	fx := h.Seed(f)
	handler := h.API
	f.Fuzz(func(t *testing.T, pathIndex byte, body []byte) {
		i := int(pathIndex) % len(paths)
		jobs, balance := h.CountJobs(t), h.Balance(t, fx.Account.ID)
		req := httptest.NewRequest(http.MethodPost, "/api"+paths[i], bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fx.Key)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code < 400 {
			if want := strictRefusal(body, known[i]); want != "" {
				t.Fatalf("%s %q: %d, but it %s", paths[i], body, rec.Code, want)
			}
			return
		}
		var env struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Code != rec.Code || env.Message == "" || env.Error == "" {
			t.Fatalf("%s %q: refusal %d is not the error envelope: %s", paths[i], body, rec.Code, rec.Body)
		}
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", paths[i], body, rec.Code, rec.Body)
		}
		if want := strictRefusal(body, known[i]); want != "" && rec.Code != 400 {
			t.Fatalf("%s %q: %d %s, but it %s: want 400", paths[i], body, rec.Code, rec.Body, want)
		}
		if h.CountJobs(t) != jobs || h.Balance(t, fx.Account.ID) != balance {
			t.Fatalf("%s %q: the refusal %s left %d jobs (was %d) and balance %d (was %d)", paths[i], body, rec.Body, h.CountJobs(t), jobs, h.Balance(t, fx.Account.ID), balance)
		}
	})
}

// strictRefusal says why the strict decoder must refuse body, if it can
// tell from the top level alone: invalid UTF-8, or a top-level field that
// is not one of known or is given twice.
func strictRefusal(body []byte, known []string) string {
	if !utf8.Valid(body) {
		return "is not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
		if seen[name] {
			return "gives " + name + " twice"
		}
		seen[name] = true
		if !slices.Contains(known, name) {
			return "has the unknown field " + strconv.Quote(name)
		}
	}
	return ""
}
