package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Bark is a fake Bark server on loopback. It takes POST /push as the real
// one does: a JSON body (or form fields), the device key (400 "device key
// is empty", 400 "failed to get device token" for an unknown key), the
// APNs payload it would build (500 "push failed: APNS push failed:
// PayloadTooLarge" above 4096 bytes), and answers {"code","message",
// "timestamp"}.
type Bark struct {
	simpleServer

	devices map[string]bool
	pushes  []BarkPush
}

// BarkPush is one notification the fake handed to APNs.
type BarkPush struct {
	DeviceKey string
	Title     string
	Body      string
	Markdown  string
	Image     string
	Group     string
	// ID is Bark's id parameter as it arrived in the JSON body (a string
	// when sent as one).
	ID          any
	PayloadSize int
}

// NewBark starts a fake Bark server, closed when the test ends.
func NewBark(tb testing.TB) *Bark {
	f := &Bark{devices: make(map[string]bool)}
	f.start(tb, f.serve)
	return f
}

// NewDevice registers a device and returns its key.
func (f *Bark) NewDevice() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := randomAlnum(22)
	f.devices[key] = true
	return key
}

// Pushes returns the notifications sent so far.
func (f *Bark) Pushes() []BarkPush { return snapshot(&f.mu, &f.pushes) }

// BarkFault is a Bark error answer, e.g. BarkFault(500, "push failed:
// APNS push failed: TooManyRequests").
func BarkFault(status int, msg string) Fault {
	return jsonFault(status, map[string]any{"code": status, "message": msg, "timestamp": time.Now().Unix()})
}

func barkAnswer(w http.ResponseWriter, status int, msg string) { BarkFault(status, msg).write(w) }

func (f *Bark) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path != "/push" || r.Method != http.MethodPost {
		barkAnswer(w, http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
		return
	}
	params := make(map[string]any)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &params); err != nil {
			barkAnswer(w, http.StatusBadRequest, fmt.Sprintf("request bind failed: %v", err))
			return
		}
	} else {
		r.Body = nopBody(body)
		_ = r.ParseForm()
		for k, v := range r.Form {
			params[strings.ToLower(k)] = v[0]
		}
	}
	p := BarkPush{Body: "NoContent"}
	for k, v := range params {
		s, _ := v.(string)
		switch strings.ToLower(k) {
		case "device_key":
			p.DeviceKey = s
		case "title":
			p.Title = s
		case "body":
			p.Body = s
		case "markdown":
			p.Markdown = fmt.Sprintf("%v", v)
		case "image":
			p.Image = fmt.Sprintf("%v", v)
		case "group":
			p.Group = fmt.Sprintf("%v", v)
		case "id":
			p.ID = v
		}
	}
	if p.DeviceKey == "" {
		barkAnswer(w, http.StatusBadRequest, "device key is empty")
		return
	}
	f.mu.Lock()
	known := f.devices[p.DeviceKey]
	f.mu.Unlock()
	if !known {
		barkAnswer(w, http.StatusBadRequest, "failed to get device token: failed to get ["+p.DeviceKey+"] device token from database")
		return
	}
	p.PayloadSize = barkPayloadSize(params)
	if p.PayloadSize > 4096 {
		barkAnswer(w, http.StatusInternalServerError, "push failed: APNS push failed: PayloadTooLarge")
		return
	}
	f.mu.Lock()
	f.pushes = append(f.pushes, p)
	f.mu.Unlock()
	barkAnswer(w, http.StatusOK, "success")
}

// barkPayloadSize builds the APNs payload as bark-server does (alert title
// and body, default body "NoContent", sound, category, thread-id from the
// group, mutable-content, and every other parameter as a custom string).
func barkPayloadSize(params map[string]any) int {
	alert := map[string]any{"body": "NoContent"}
	aps := map[string]any{"alert": alert, "sound": "1107", "category": "myNotificationCategory", "mutable-content": 1}
	payload := map[string]any{"aps": aps}
	for k, v := range params {
		switch k = strings.ToLower(k); k {
		case "device_key":
		case "title", "body":
			alert[k] = v
		case "sound", "category":
			aps[k] = v
		default:
			if k == "group" {
				aps["thread-id"] = v
			}
			payload[k] = fmt.Sprintf("%v", v)
		}
	}
	b, _ := json.Marshal(payload)
	return len(b)
}
