package telegram_test

import (
	"testing"

	"github.com/heraldpush/herald/platforms/telegram"
)

func BenchmarkMarkdownToHTML(b *testing.B) {
	md := "# Deploy finished\n**api** is *live* — see [the dashboard](https://example.com/d)\n\n- 3 services\n- 0 errors\n\n```go\nx := a < b\n```"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = telegram.MarkdownToHTML(md)
	}
}
