package push

import (
	"regexp"
	"testing"
)

func FuzzValidateIdempotencyKey(f *testing.F) {
	for _, s := range []string{"a", "order-42:retry_1", "", "has space", "ünï", "x\x00y"} {
		f.Add(s)
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_:-]{1,100}$`)
	f.Fuzz(func(t *testing.T, key string) {
		err := ValidateIdempotencyKey(key)
		if want := valid.MatchString(key); (err == nil) != want {
			t.Fatalf("ValidateIdempotencyKey(%q) = %v, want valid=%v", key, err, want)
		}
		if err != nil && (KindOf(err) != Invalid || ReasonOf(err) != "invalid_idempotency_key") {
			t.Fatalf("ValidateIdempotencyKey(%q) = %v: wrong kind or reason", key, err)
		}
	})
}

// FuzzFingerprint checks that two requests get equal fingerprints exactly
// when every field is equal.
func FuzzFingerprint(f *testing.F) {
	f.Add("single", int64(1), int64(2), "", 0, "hi", "", false, "single", int64(1), int64(2), "", 0, "hi", "", false)
	f.Add("batch", int64(1), int64(2), "user", 2, "**x**", "", false, "batch", int64(1), int64(2), "user", 2, "**x**", "", true)
	f.Add("multi", int64(3), int64(0), "", 7, "", "https://e/x.png", false, "multi", int64(3), int64(0), "", 7, "h", "ttps://e/x.png", false)
	f.Fuzz(func(t *testing.T,
		k1 string, b1, t1 int64, tt1 string, m1 int, c1, u1 string, w1 bool,
		k2 string, b2, t2 int64, tt2 string, m2 int, c2, u2 string, w2 bool) {
		fp1 := fingerprint(RequestKind(k1), []destination{{b1, t1}}, TargetType(tt1), Message{Type: MsgType(m1), Content: c1, ImageURL: u1, Wakeup: w1})
		fp2 := fingerprint(RequestKind(k2), []destination{{b2, t2}}, TargetType(tt2), Message{Type: MsgType(m2), Content: c2, ImageURL: u2, Wakeup: w2})
		same := k1 == k2 && b1 == b2 && t1 == t2 && tt1 == tt2 && m1 == m2 && c1 == c2 && u1 == u2 && w1 == w2
		if same != (fp1 == fp2) {
			t.Fatalf("requests equal=%v but fingerprints equal=%v", same, fp1 == fp2)
		}
	})
}

func BenchmarkFingerprint(b *testing.B) {
	dests := make([]destination, 50)
	for i := range dests {
		dests[i] = destination{BotID: 1, TargetID: int64(i + 1)}
	}
	m := Message{Type: MsgTypeMarkdown, Content: "**deployed** v42 to production; all checks green"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = fingerprint(RequestKindBatch, dests, "", m)
	}
}
