package wechat

import (
	"strconv"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/platforms/internal/tokencache"
	"github.com/heraldpush/herald/push"
)

// answer is a WeChat API answer: always HTTP 200 with {"errcode","errmsg"}
// (errcode 0 or absent on success), plus the media fields of an upload.
type answer struct {
	ErrCode int    `json:"errcode"`
	ErrMsg  string `json:"errmsg"`
	Type    string `json:"type"`
	MediaID string `json:"media_id"`
}

// decode reads an answer and returns the classified failure when WeChat
// did not accept the call. WeChat answers errors with an errcode, so a
// non-2xx answer without one is a proxy's, as is a body that is not JSON.
func decode(resp *httpcall.Response, now time.Time) (answer, error) {
	var ans answer
	ok := resp.Status >= 200 && resp.Status < 300
	if err := httpcall.DecodeOwn(resp, &ans, func() bool { return ans.ErrCode != 0 || ok }, "no errcode in the answer",
		httpcall.Origin{Platform: "wechat", Name: "WeChat", Hint: "check api_base", Wait: time.Second}); err != nil {
		return ans, err
	}
	if ans.ErrCode == 0 {
		return ans, nil
	}
	se := classifyCode(ans.ErrCode, ans.ErrMsg, now)
	if se.Outcome == push.OutcomeDefinitive && resp.Status >= 500 && !known(ans.ErrCode) {
		se.Outcome = push.OutcomeUncertain
	}
	switch ans.ErrCode {
	case 40001, 40014, 42001:
		return ans, &tokencache.Refused{Err: se}
	}
	return ans, se
}

// known reports whether a code is one classify names explicitly.
func known(code int) bool {
	switch code {
	case 40001, 40014, 42001, -1, 45009, 45011, 45015, 45047, 43004, 40003, 48001, 40164, 45002, 44004, 40007, 40008, 41001, 47001, 40004, 40005, 40009:
		return true
	}
	return false
}

// classifyCode maps an errcode to an outcome with a reason a person can
// act on (PLATFORMS.md §2).
func classifyCode(code int, msg string, now time.Time) *push.SendError {
	c := strconv.Itoa(code)
	if msg == "" {
		msg = "errcode " + c
	}
	refuse := func(why string) *push.SendError {
		return &push.SendError{Outcome: push.OutcomeDefinitive, Code: c, Message: msg + why}
	}
	retry := func(after time.Duration, why string) *push.SendError {
		return &push.SendError{Outcome: push.OutcomeRetryable, Code: c, RetryAfter: after, Message: msg + why}
	}
	switch code {
	case 40001, 40014, 42001:
		return retry(0, ": the access token was refused")
	case -1:
		return retry(time.Second, ": WeChat is busy; nothing was sent")
	case 45011:
		return retry(untilNextMinute(now), ": the account's per-minute API quota is used up; nothing was sent")
	case 45009:
		return retry(untilNextDay(now), ": the account's daily API quota is used up (it resets at midnight China time); nothing was sent")
	case 45015:
		return refuse(": the user has not written to the Official Account in the last 48 hours; customer-service messages can reach a user only within 48 hours of the user's last message or interaction")
	case 45047:
		return refuse(": the account has sent as many customer-service messages as WeChat allows since the user's last message; the user must write to the Official Account again")
	case 43004:
		return refuse(": the user does not follow the Official Account")
	case 40003:
		return refuse(": the openid is not a follower of this Official Account: check the target's address")
	case 48001:
		return refuse(": the Official Account has no permission for customer-service messages (it needs to be verified)")
	case 40164:
		return refuse(": add this server's public IP address to the Official Account's IP whitelist")
	case 45002:
		return refuse(": the message is too long for WeChat: shorten it")
	case 40007:
		return refuse(": WeChat does not know the uploaded image's media_id")
	}
	return refuse("")
}

func untilNextMinute(now time.Time) time.Duration {
	return now.Truncate(time.Minute).Add(time.Minute).Sub(now)
}

func untilNextDay(now time.Time) time.Duration {
	china := time.FixedZone("CST", 8*3600)
	t := now.In(china)
	midnight := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, china)
	return midnight.Sub(now)
}
