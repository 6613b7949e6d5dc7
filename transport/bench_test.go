package transport

import "testing"

func BenchmarkDecodePrivateRequest(b *testing.B) {
	body := []byte(`{"botId":12,"target":"345","content":"**deployed** v42 to production","msgType":2,"targetType":"user","isWakeup":false}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var r privateRequest
		if err := decodeJSON(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMultiRequest(b *testing.B) {
	body := []byte(`{"bots":[{"botId":1,"targets":["1","2","3","4","5"]},{"bot_id":2,"targets":["6","7"]}],"content":"hello","msgType":0}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var r multiRequest
		if err := decodeJSON(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}
