package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The WeChat fake's callbacks: what users do (write to the account,
// follow it, scan its QR code, unfollow) becomes a message pushed to the
// account's server URL, signed and, in the compatible and safe modes,
// encrypted (see wxcallback.go); the passive reply in the answer is
// decrypted and checked. qrcode/create makes parametric QR codes whose
// tickets a user can scan, except for an unverified account (48001).

// WeChatServer is an account's server configuration (服务器配置).
type WeChatServer struct {
	URL            string
	Token          string
	EncodingAESKey string // for the compatible and safe modes
	Mode           string // WeChatPlain (default), WeChatCompatible or WeChatSafe
}

// WeChatPush is one callback the fake made, and what became of it.
type WeChatPush struct {
	AppID, OpenID string
	What          string // text, subscribe, unsubscribe, SCAN
	WxPush
}

// WeChatQRCode is a parametric QR code the fake made.
type WeChatQRCode struct {
	AppID         string
	Ticket        string
	URL           string
	Action        string
	Scene         string
	ExpireSeconds int64
	ExpiresAt     time.Time
}

type wxTicket = WeChatQRCode

// Configure sets the account's server configuration, after WeChat's URL
// check of it (the GET handshake), as the admin console does.
func (f *WeChat) Configure(appID string, s WeChatServer) error {
	if s.Mode == "" {
		s.Mode = WeChatPlain
	}
	srv := &wxServer{url: s.URL, token: s.Token, mode: s.Mode, receiveID: appID}
	if s.Mode != WeChatPlain {
		k, err := wxKey(s.EncodingAESKey)
		if err != nil {
			return err
		}
		srv.key = k
	}
	f.mu.Lock()
	app := f.apps[appID]
	if app == nil {
		f.mu.Unlock()
		return errors.New("no such account")
	}
	srv.account = app.ghID
	f.mu.Unlock()
	if err := srv.check(); err != nil {
		return err
	}
	f.mu.Lock()
	app.server = srv
	f.mu.Unlock()
	return nil
}

// SetUnverified makes an account one that may not create QR codes (an
// unverified or subscription account): qrcode/create answers 48001.
func (f *WeChat) SetUnverified(appID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apps[appID].unverified = true
}

// GhID returns the account's original id (gh_…).
func (f *WeChat) GhID(appID string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.apps[appID].ghID
}

// Write makes a follower write text to the account (a follower who was
// not yet one follows first): the window for customer-service messages
// opens.
func (f *WeChat) Write(appID, openid, text string) WxPush {
	return f.WriteTampered(appID, openid, text, WxTamper{})
}

// WriteTampered is Write with the callback spoiled by t.
func (f *WeChat) WriteTampered(appID, openid, text string, t WxTamper) WxPush {
	f.mu.Lock()
	u := f.follower(appID, openid)
	u.following, u.lastMsg, u.replies = true, time.Now(), 0
	f.nextMsgID++
	m := wxInbound{from: openid, msgType: "text", content: text, msgID: 24000000000000000 + f.nextMsgID}
	f.mu.Unlock()
	return f.deliverTo(appID, m, t)
}

// Subscribe makes a user follow the account.
func (f *WeChat) Subscribe(appID, openid string) WxPush {
	f.mu.Lock()
	u := f.follower(appID, openid)
	u.following, u.lastMsg, u.replies = true, time.Now(), 0
	f.mu.Unlock()
	return f.deliverTo(appID, wxInbound{from: openid, msgType: "event", event: "subscribe"}, WxTamper{})
}

// Unsubscribe makes a follower unfollow the account: messages to them
// are refused (43004) from now on.
func (f *WeChat) Unsubscribe(appID, openid string) WxPush {
	f.mu.Lock()
	f.follower(appID, openid).following = false
	f.mu.Unlock()
	return f.deliverTo(appID, wxInbound{from: openid, msgType: "event", event: "unsubscribe"}, WxTamper{})
}

// Scan makes a user scan the QR code of a ticket: a user who does not
// follow the account follows it (subscribe, EventKey qrscene_<scene>), a
// follower gets SCAN with the scene.
func (f *WeChat) Scan(appID, openid, ticket string) WxPush {
	f.mu.Lock()
	q, ok := f.tickets[ticket]
	if !ok || q.AppID != appID || time.Now().After(q.ExpiresAt) {
		f.mu.Unlock()
		return WxPush{Err: errors.New("the QR code is unknown or expired")}
	}
	u := f.follower(appID, openid)
	m := wxInbound{from: openid, msgType: "event", event: "SCAN", eventKey: q.Scene, ticket: ticket}
	if !u.following {
		m.event, m.eventKey = "subscribe", "qrscene_"+q.Scene
	}
	u.following, u.lastMsg, u.replies = true, time.Now(), 0
	f.mu.Unlock()
	return f.deliverTo(appID, m, WxTamper{})
}

// Redeliver pushes the account's last callback again, as WeChat does
// when it saw no answer within 5 s: the same message, id and time.
func (f *WeChat) Redeliver(appID string) WxPush {
	f.mu.Lock()
	app := f.apps[appID]
	srv, last := app.server, app.last
	f.mu.Unlock()
	if srv == nil || last == nil {
		return WxPush{Err: errors.New("nothing to deliver again")}
	}
	return srv.deliver(*last, WxTamper{})
}

// Pushes returns the callbacks made so far.
func (f *WeChat) Pushes() []WeChatPush { return snapshot(&f.mu, &f.pushes) }

// QRCodes returns the QR codes made so far.
func (f *WeChat) QRCodes() []WeChatQRCode {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []WeChatQRCode
	for _, q := range f.tickets {
		out = append(out, q)
	}
	return out
}

// follower returns a user's record, new (not following) when unknown.
// f.mu is held.
func (f *WeChat) follower(appID, openid string) *wxFollower {
	u := f.followers[appID+"/"+openid]
	if u == nil {
		u = &wxFollower{}
		f.followers[appID+"/"+openid] = u
	}
	return u
}

// deliverTo pushes a message to the account's server. CreateTime is
// made to rise per account, since the platform's events have no id but
// their user and time.
func (f *WeChat) deliverTo(appID string, m wxInbound, t WxTamper) WxPush {
	f.mu.Lock()
	app := f.apps[appID]
	srv := app.server
	now := time.Now().Unix()
	if now <= app.lastCreate {
		now = app.lastCreate + 1
	}
	app.lastCreate, m.createTime = now, now
	last := m
	app.last = &last
	f.mu.Unlock()
	if srv == nil {
		return WxPush{Err: errors.New("the account has no server configuration")}
	}
	res := srv.deliver(m, t)
	what := m.msgType
	if m.msgType == "event" {
		what = m.event
	}
	f.mu.Lock()
	f.pushes = append(f.pushes, WeChatPush{AppID: appID, OpenID: m.from, What: what, WxPush: res})
	f.mu.Unlock()
	return res
}

// qrcode answers qrcode/create: temporary (QR_SCENE, QR_STR_SCENE: 60 s
// by default, 30 days at most) and permanent (QR_LIMIT_SCENE,
// QR_LIMIT_STR_SCENE) codes, scene_str of 1 to 64 characters; 48001 for
// an account that may not create them.
func (f *WeChat) qrcode(w http.ResponseWriter, appID string, body []byte) {
	var req struct {
		ExpireSeconds *int64 `json:"expire_seconds"`
		ActionName    string `json:"action_name"`
		ActionInfo    struct {
			Scene struct {
				SceneID  int64  `json:"scene_id"`
				SceneStr string `json:"scene_str"`
			} `json:"scene"`
		} `json:"action_info"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		wxError(w, 47001, "data format error")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.apps[appID].unverified {
		wxError(w, 48001, "api unauthorized")
		return
	}
	q := WeChatQRCode{AppID: appID, Action: req.ActionName}
	scene := req.ActionInfo.Scene
	switch req.ActionName {
	case "QR_STR_SCENE", "QR_LIMIT_STR_SCENE":
		if n := len(scene.SceneStr); n < 1 || n > 64 {
			wxError(w, 40053, "invalid action info")
			return
		}
		q.Scene = scene.SceneStr
	case "QR_SCENE", "QR_LIMIT_SCENE":
		if scene.SceneID == 0 {
			wxError(w, 40053, "invalid action info")
			return
		}
		q.Scene = fmt.Sprint(scene.SceneID)
	default:
		wxError(w, 40052, "invalid action name")
		return
	}
	q.ExpireSeconds = 60
	if req.ExpireSeconds != nil {
		q.ExpireSeconds = min(max(*req.ExpireSeconds, 1), 2592000)
	}
	q.ExpiresAt = time.Now().Add(time.Duration(q.ExpireSeconds) * time.Second)
	if req.ActionName == "QR_LIMIT_STR_SCENE" || req.ActionName == "QR_LIMIT_SCENE" {
		q.ExpireSeconds, q.ExpiresAt = 0, time.Now().AddDate(100, 0, 0)
	}
	q.Ticket = "gQ" + randomAlnum(62)
	q.URL = "http://weixin.qq.com/q/" + randomAlnum(22)
	f.tickets[q.Ticket] = q
	ans := map[string]any{"ticket": q.Ticket, "url": q.URL}
	if q.ExpireSeconds > 0 {
		ans["expire_seconds"] = q.ExpireSeconds
	}
	wxWrite(w, ans)
}
