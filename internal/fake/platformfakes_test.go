package fake

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// call sends a raw request to a fake and returns its status and decoded
// JSON body.
func rawCall(t *testing.T, method, url string, header http.Header, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return resp.StatusCode, m
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {"application/json"}} }

// TestWeComFakeChecks: the fake refuses what WeCom refuses, with WeCom's
// codes, including requests the provider never makes.
func TestWeComFakeChecks(t *testing.T) {
	f := NewWeCom(t)
	app := f.NewApp()
	f.AddUser(app.CorpID, "u", WeComActive)
	_, tok := rawCall(t, "GET", f.URL()+"/cgi-bin/gettoken?corpid="+app.CorpID+"&corpsecret="+app.Secret, nil, nil)
	token, _ := tok["access_token"].(string)
	if token == "" || tok["expires_in"] != 7200.0 {
		t.Fatalf("gettoken = %v", tok)
	}
	_, again := rawCall(t, "GET", f.URL()+"/cgi-bin/gettoken?corpid="+app.CorpID+"&corpsecret="+app.Secret, nil, nil)
	if again["access_token"] != token {
		t.Fatal("a second gettoken within the lifetime returned another token")
	}
	robot := f.NewRobot()
	body := func(v any) []byte { b, _ := json.Marshal(v); return b }
	text := map[string]any{"touser": "u", "msgtype": "text", "agentid": app.AgentID, "text": map[string]string{"content": "x"}}
	cases := []struct {
		name string
		url  string
		body []byte
		code float64
	}{
		{"wrong secret", "/cgi-bin/gettoken?corpid=" + app.CorpID + "&corpsecret=nope", nil, 40001},
		{"unknown corp", "/cgi-bin/gettoken?corpid=ww404&corpsecret=x", nil, 40013},
		{"no token", "/cgi-bin/message/send", body(text), 41001},
		{"bad token", "/cgi-bin/message/send?access_token=bogus", body(text), 40014},
		{"not JSON", "/cgi-bin/message/send?access_token=" + token, []byte("{"), 47001},
		{"other agentid", "/cgi-bin/message/send?access_token=" + token, body(map[string]any{"touser": "u", "msgtype": "text", "agentid": 1, "text": map[string]string{"content": "x"}}), 40056},
		{"unknown msgtype", "/cgi-bin/message/send?access_token=" + token, body(map[string]any{"touser": "u", "msgtype": "voice", "agentid": app.AgentID}), 40008},
		{"empty content", "/cgi-bin/message/send?access_token=" + token, body(map[string]any{"touser": "u", "msgtype": "text", "agentid": app.AgentID, "text": map[string]string{"content": " "}}), 44004},
		{"unknown media", "/cgi-bin/message/send?access_token=" + token, body(map[string]any{"touser": "u", "msgtype": "image", "agentid": app.AgentID, "image": map[string]string{"media_id": "x"}}), 40007},
		{"upload without media", "/cgi-bin/media/upload?type=image&access_token=" + token, []byte(""), 41005},
		{"unknown chat", "/cgi-bin/appchat/send?access_token=" + token, body(map[string]any{"chatid": "nochat", "msgtype": "text", "text": map[string]string{"content": "x"}}), 86003},
		{"bad robot key", "/cgi-bin/webhook/send?key=nope", body(map[string]any{"msgtype": "text", "text": map[string]string{"content": "x"}}), 93000},
		{"robot md5 mismatch", "/cgi-bin/webhook/send?key=" + robot, body(map[string]any{"msgtype": "image", "image": map[string]string{"base64": "iVBORw0KGgo=", "md5": "00000000000000000000000000000000"}}), 301019},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "POST"
			if strings.HasPrefix(c.url, "/cgi-bin/gettoken") {
				method = "GET"
			}
			status, m := rawCall(t, method, f.URL()+c.url, jsonHeader(), c.body)
			if status != 200 || m["errcode"] != c.code || !strings.Contains(m["errmsg"].(string), "more info at") {
				t.Fatalf("%d %v, want HTTP 200 errcode %v", status, m, c.code)
			}
		})
	}
	// Long text is cut to 2048 bytes without an error, as WeCom does.
	long := strings.Repeat("字", 700)
	_, m := rawCall(t, "POST", f.URL()+"/cgi-bin/message/send?access_token="+token, jsonHeader(),
		body(map[string]any{"touser": "u", "msgtype": "text", "agentid": app.AgentID, "text": map[string]string{"content": long}}))
	if m["errcode"] != 0.0 || len(f.Messages()[0].Content) != 2046 {
		t.Fatalf("long text: %v, delivered %d bytes", m, len(f.Messages()[0].Content))
	}
	// An expired token is refused with 42001 and a new one is issued.
	f.ExpireTokens()
	if _, m := rawCall(t, "POST", f.URL()+"/cgi-bin/message/send?access_token="+token, jsonHeader(), body(text)); m["errcode"] != 42001.0 {
		t.Fatalf("expired token: %v", m)
	}
	if _, m := rawCall(t, "GET", f.URL()+"/cgi-bin/gettoken?corpid="+app.CorpID+"&corpsecret="+app.Secret, nil, nil); m["access_token"] == token {
		t.Fatal("an expired token was handed out again")
	}
}

// TestFeishuFakeChecks: the fake refuses what Feishu refuses, with
// Feishu's codes, including requests the provider never makes.
func TestFeishuFakeChecks(t *testing.T) {
	f := NewFeishu(t)
	app := f.NewApp()
	f.AddUser("open_id", "ou_1234567890")
	f.SetTokenTTL(4 * time.Second)
	body := func(v any) []byte { b, _ := json.Marshal(v); return b }
	_, tok := rawCall(t, "POST", f.URL()+"/open-apis/auth/v3/tenant_access_token/internal", jsonHeader(), body(map[string]string{"app_id": app.AppID, "app_secret": app.AppSecret}))
	token, _ := tok["tenant_access_token"].(string)
	if token == "" || tok["expire"] != 4.0 {
		t.Fatalf("token = %v", tok)
	}
	auth := jsonHeader()
	auth.Set("Authorization", "Bearer "+token)
	msg := func(content any, extra map[string]any) []byte {
		m := map[string]any{"receive_id": "ou_1234567890", "msg_type": "text", "content": content}
		for k, v := range extra {
			m[k] = v
		}
		return body(m)
	}
	textContent := `{"text":"hi"}`
	var mw bytes.Buffer
	w := multipart.NewWriter(&mw)
	_ = w.WriteField("image_type", "message")
	fw, _ := w.CreateFormFile("image", "x.txt")
	_, _ = fw.Write([]byte("plain text, not an image"))
	_ = w.Close()
	upload := http.Header{"Content-Type": {w.FormDataContentType()}, "Authorization": {"Bearer " + token}}

	cases := []struct {
		name   string
		path   string
		header http.Header
		body   []byte
		status int
		code   float64
	}{
		{"bad secret", "/open-apis/auth/v3/tenant_access_token/internal", jsonHeader(), body(map[string]string{"app_id": app.AppID, "app_secret": "nope"}), 400, 10014},
		{"no token", "/open-apis/im/v1/messages?receive_id_type=open_id", jsonHeader(), msg(textContent, nil), 400, 99991661},
		{"bad token", "/open-apis/im/v1/messages?receive_id_type=open_id", http.Header{"Authorization": {"Bearer t-bogus"}, "Content-Type": {"application/json"}}, msg(textContent, nil), 400, 99991663},
		{"no receive_id_type", "/open-apis/im/v1/messages", auth, msg(textContent, nil), 400, 99992402},
		{"content as an object, not a string", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(map[string]string{"text": "hi"}, nil), 400, 99992402},
		{"uuid over 50", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(textContent, map[string]any{"uuid": strings.Repeat("u", 51)}), 400, 99992402},
		{"content not JSON", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg("hi", nil), 400, 230001},
		{"card without elements", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(`{"schema":"2.0","body":{"elements":[]}}`, map[string]any{"msg_type": "interactive"}), 400, 230099},
		{"unknown image key", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(`{"image_key":"img_x"}`, map[string]any{"msg_type": "image"}), 400, 230001},
		{"unknown user", "/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(textContent, map[string]any{"receive_id": "ou_nobody"}), 400, 230013},
		{"upload of a non-image", "/open-apis/im/v1/images", upload, mw.Bytes(), 400, 234011},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, m := rawCall(t, "POST", f.URL()+c.path, c.header, c.body)
			if status != c.status || m["code"] != c.code {
				t.Fatalf("%d %v, want HTTP %d code %v", status, m, c.status, c.code)
			}
		})
	}
	// The same uuid delivers once and answers the first message again.
	var ids []any
	for i := 0; i < 2; i++ {
		_, m := rawCall(t, "POST", f.URL()+"/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(textContent, map[string]any{"uuid": "job-1"}))
		ids = append(ids, m["data"].(map[string]any)["message_id"])
	}
	if ids[0] != ids[1] || len(f.Messages()) != 1 || f.Deduplicated() != 1 {
		t.Fatalf("uuid repeat: ids %v, %d delivered", ids, len(f.Messages()))
	}
	// With a quarter of its life left, a new token is issued and the old
	// one keeps working until it expires.
	time.Sleep(3200 * time.Millisecond)
	_, tok2 := rawCall(t, "POST", f.URL()+"/open-apis/auth/v3/tenant_access_token/internal", jsonHeader(), body(map[string]string{"app_id": app.AppID, "app_secret": app.AppSecret}))
	if tok2["tenant_access_token"] == token {
		t.Fatal("the same token near its expiry")
	}
	if status, m := rawCall(t, "POST", f.URL()+"/open-apis/im/v1/messages?receive_id_type=open_id", auth, msg(textContent, nil)); status != 200 {
		t.Fatalf("the old token stopped working early: %v", m)
	}
}
