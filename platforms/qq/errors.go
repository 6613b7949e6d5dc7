package qq

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// answer is the API's reply: a sent message's id, an uploaded file, or an
// error as {"code","message","err_code","trace_id"}.
type answer struct {
	ID string `json:"id"`
	// Timestamp is an int in the documentation and an RFC 3339 string in
	// real answers; it is not used, so any shape is accepted.
	Timestamp json.RawMessage `json:"timestamp"`
	FileUUID  string          `json:"file_uuid"`
	FileInfo  string          `json:"file_info"`
	TTL       json.RawMessage `json:"ttl"`
	Code      int             `json:"code"`
	ErrCode   int             `json:"err_code"`
	Message   string          `json:"message"`
	TraceID   string          `json:"trace_id"`
}

// scene says what was being done, for the wording of refusals.
type scene struct {
	group  bool
	wakeup bool
}

// Codes by class (PLATFORMS.md §1 and QQ's openapi error table).
const (
	codeNoProactive    = 40034102 // 主动消息失败, 无权限
	codeMarkdownDenied = 50056    // 不允许发送 markdown content
	codeTooLong        = 40054007 // 消息长度超限
	codeDuplicateSeq   = 40054005 // 消息被去重: a msg_id and msg_seq sent before
)

func tokenCode(code int) bool {
	switch code {
	case 11241, 11242, 11243, 11244: // missing, check failed, check not passed, not exist or expired
		return true
	}
	return false
}

// decode reads an API answer. It returns the answer when QQ accepted the
// call (2xx and no error code) and the classified failure otherwise.
func decode(resp *httpcall.Response, sc scene) (answer, error) {
	var ans answer
	if err := json.Unmarshal(resp.Body, &ans); err != nil {
		return ans, notAPI(resp, err)
	}
	if resp.Status >= 200 && resp.Status < 300 && ans.Code == 0 {
		return ans, nil
	}
	return ans, classify(resp.Status, ans, sc)
}

// notAPI classifies an answer that is not the API's JSON: a gateway's page
// (TAPISIX) or a broken body. QQ's gateway answers 401 to a refused token,
// and a 429 waits a second.
func notAPI(resp *httpcall.Response, err error) error {
	if resp.Status == http.StatusUnauthorized {
		return &tokencache.Refused{Err: &push.SendError{Outcome: push.OutcomeRetryable, Code: "401", Message: "HTTP 401: the access token was refused"}}
	}
	return httpcall.Foreign(resp, err, httpcall.Origin{Platform: "qq", Name: "the QQ API", Hint: "check api_base", Wait: time.Second})
}

// classify maps an error answer to an outcome, with a reason a person can
// act on.
func classify(status int, ans answer, sc scene) error {
	code := ans.Code
	if code == 0 {
		code = ans.ErrCode
	}
	c := strconv.Itoa(code)
	if code == 0 {
		c = strconv.Itoa(status)
	}
	text := ans.Message
	if text == "" {
		text = fmt.Sprintf("HTTP %d", status)
	}
	retry := func(after time.Duration, why string) error {
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, RetryAfter: after, Message: text + why}
	}
	refuse := func(why string) error {
		return &push.SendError{Outcome: push.OutcomeDefinitive, Code: c, Message: text + why}
	}
	switch {
	case tokenCode(code) || status == http.StatusUnauthorized:
		return &tokencache.Refused{Err: &push.SendError{Outcome: push.OutcomeRetryable, Code: c, Message: text + ": the access token was refused"}}
	case code == 304023 || code == 304024:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: c,
			Message: text + ": QQ holds the message for manual review and delivers it only if the review passes"}
	case code == 22009 || code == 1100100 || code == 20028 || status == http.StatusTooManyRequests:
		return retry(time.Second, ": QQ's send rate limit was hit; nothing was sent")
	case code == 304082 || code == 304083:
		return retry(0, ": QQ could not fetch the image from its URL; nothing was sent")
	case code == 11252 || code == 11263 || code == 11281:
		return retry(0, ": a QQ system check failed; QQ says one more try usually works")
	case code == codeNoProactive && sc.wakeup:
		return refuse(": QQ refused the wake-up message: a user can be woken up only after talking to the bot, with one message per window (same day, days 1-3, 3-7 and 7-30 after the user's last message)")
	case code == codeNoProactive && sc.group:
		return refuse(": QQ refused a proactive group message: since 2025-04-21 QQ accepts group messages only as passive replies within 5 minutes of a member's message to the bot, and the bot has no permission for proactive messages")
	case code == codeNoProactive:
		return refuse(": QQ refused a proactive message: since 2025-04-21 QQ offers no proactive messages to users; send with isWakeup=true (is_wakeup on /openapi/send) to reach a user who talked to the bot in the last 30 days")
	case code == codeDuplicateSeq:
		return refuse(": QQ already took a reply with this msg_id and msg_seq (an earlier attempt of this job may have been delivered)")
	case code == 304026:
		return refuse(": QQ does not know the message or event this push replies to")
	case code == 304027 || code == 304028:
		return refuse(": the message replied to is too old or not addressed to the bot; QQ takes replies only within its reply window")
	case code == 304003:
		return refuse(": the message contains a URL whose domain is not registered for this bot in the QQ bot console")
	case code == codeTooLong:
		return refuse(": the message is too long for QQ: shorten it")
	case code == codeMarkdownDenied:
		return refuse(": the bot has no permission for native Markdown")
	case code == 11253:
		return refuse(": the bot has no permission for this API: apply for it in the QQ bot console")
	case code == 11254 || code == 11265:
		return refuse(": the bot or this API is banned for the bot on QQ")
	case code == 11251 || code == 11261 || code == 11275:
		return refuse(": QQ does not recognise the bot's app_id")
	case status >= 500:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: c, Message: text + fmt.Sprintf(" (HTTP %d): QQ may have processed the message", status)}
	case status >= 200 && status < 300:
		return &push.SendError{Outcome: push.OutcomeUncertain, Code: c, Message: text + fmt.Sprintf(" (HTTP %d with an error code): QQ may have processed the message", status)}
	}
	return refuse("")
}
