package transport

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/heraldpush/herald/push"
)

func BenchmarkDecodePrivateRequest(b *testing.B) {
	body := []byte(`{"botId":12,"target":"345","content":"**deployed** v42 to production","msgType":2,"targetType":"user","isWakeup":false}`)
	sh := newShape(&privateRequest{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var r privateRequest
		if err := decodeJSON(body, &r, sh); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMultiRequest(b *testing.B) {
	body := []byte(`{"bots":[{"botId":1,"targets":["1","2","3","4","5"]},{"bot_id":2,"targets":["6","7"]}],"content":"hello","msgType":0}`)
	sh := newShape(&multiRequest{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var r multiRequest
		if err := decodeJSON(body, &r, sh); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteMessageRecord measures the answer of a delivered single
// send: the message record encoded as JSON and written.
func BenchmarkWriteMessageRecord(b *testing.B) {
	j := push.Job{ID: "01a1fd03-f066-7762-8d86-d03bf58c3d18", MessageID: 123456, AccountID: 1, BotID: 12, TargetID: 345,
		Message: push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42 to production"}, State: push.StateSucceeded, PlatformIndex: "100001:987"}
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Body.Reset()
		writeOK(w, http.StatusOK, "", messageRecord(j))
	}
}
