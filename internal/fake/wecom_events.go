package fake

import (
	"errors"
	"strings"
	"time"
)

// The WeCom fake's callbacks: what members do (write to an app, enter or
// leave its visible range) becomes a message pushed to the app's callback
// URL, always encrypted for the corp (receiveid = CorpID) and signed over
// the ciphertext (see wxcallback.go); the passive reply in the answer is
// decrypted and checked.

// WeComPush is one callback the fake made, and what became of it.
type WeComPush struct {
	CorpID, UserID string
	What           string // text, subscribe, unsubscribe
	WxPush
}

// Configure sets the app's API receive settings (接收消息: URL, Token,
// EncodingAESKey), after WeCom's URL check of them: a GET with an
// encrypted echostr that the server must answer decrypted.
func (f *WeCom) Configure(app WeComApp, url, token, encodingAESKey string) error {
	k, err := wxKey(encodingAESKey)
	if err != nil {
		return err
	}
	srv := &wxServer{url: url, token: token, key: k, receiveID: app.CorpID, wecom: true, agentID: app.AgentID, account: app.CorpID}
	if err := srv.check(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corps[app.CorpID].servers[app.AgentID] = srv
	return nil
}

// Write makes a member write text to the app (a member not yet known
// becomes an active one).
func (f *WeCom) Write(app WeComApp, userID, text string) WxPush {
	return f.WriteTampered(app, userID, text, WxTamper{})
}

// WriteTampered is Write with the callback spoiled by t.
func (f *WeCom) WriteTampered(app WeComApp, userID, text string, t WxTamper) WxPush {
	f.mu.Lock()
	corp := f.corps[app.CorpID]
	if corp.users[strings.ToLower(userID)] == "" {
		corp.users[strings.ToLower(userID)] = WeComActive
	}
	corp.nextMsgID++
	m := wxInbound{from: userID, msgType: "text", content: text, msgID: 7300000000000000000 + corp.nextMsgID}
	f.mu.Unlock()
	return f.deliverTo(app, m, t)
}

// Subscribe makes a member enter the app's visible range (or join the
// corp): messages reach them again.
func (f *WeCom) Subscribe(app WeComApp, userID string) WxPush {
	f.mu.Lock()
	f.corps[app.CorpID].users[strings.ToLower(userID)] = WeComActive
	f.mu.Unlock()
	return f.deliverTo(app, wxInbound{from: userID, msgType: "event", event: "subscribe"}, WxTamper{})
}

// Unsubscribe makes a member leave the app's visible range (or the
// corp): messages to them fail from now on.
func (f *WeCom) Unsubscribe(app WeComApp, userID string) WxPush {
	f.mu.Lock()
	delete(f.corps[app.CorpID].users, strings.ToLower(userID))
	f.mu.Unlock()
	return f.deliverTo(app, wxInbound{from: userID, msgType: "event", event: "unsubscribe"}, WxTamper{})
}

// Pushes returns the callbacks made so far.
func (f *WeCom) Pushes() []WeComPush { return snapshot(&f.mu, &f.pushes) }

// deliverTo pushes a message to the app's callback URL. CreateTime is
// made to rise per corp, since the platform's events have no id but their
// member and time.
func (f *WeCom) deliverTo(app WeComApp, m wxInbound, t WxTamper) WxPush {
	f.mu.Lock()
	corp := f.corps[app.CorpID]
	srv := corp.servers[app.AgentID]
	now := time.Now().Unix()
	if now <= corp.lastCreate {
		now = corp.lastCreate + 1
	}
	corp.lastCreate, m.createTime = now, now
	f.mu.Unlock()
	if srv == nil {
		return WxPush{Err: errors.New("the app has no callback settings")}
	}
	res := srv.deliver(m, t)
	what := m.msgType
	if m.msgType == "event" {
		what = m.event
	}
	f.mu.Lock()
	f.pushes = append(f.pushes, WeComPush{CorpID: app.CorpID, UserID: m.from, What: what, WxPush: res})
	f.mu.Unlock()
	return res
}
