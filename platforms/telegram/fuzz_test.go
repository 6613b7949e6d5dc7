package telegram_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/platforms/telegram"
)

// FuzzMarkdownToHTML checks that any Markdown converts to HTML that
// Telegram accepts: only its tags, balanced and properly nested, and <, >
// and & escaped outside tags; and that VisibleLength counts what Telegram
// will count.
func FuzzMarkdownToHTML(f *testing.F) {
	for _, s := range []string{
		"# Title\n\n**bold** _it_ ~~del~~ `code` [link](https://e.com) ![img](https://e.com/i.png)",
		"- a\n- b\n  1. c\n\n> quote\n> > nested",
		"```go\nx := a < b && c > d\n```",
		"<b>raw</b> & <script>alert(1)</script> &amp; &#65; &nbsp;",
		"*unclosed **mixed _nesting* here__",
		"[x](javascript:alert(1)) <https://auto.link> a@b.co",
		"| a | b |\n|---|---|\n| 1 | 2 |",
		"\x00\xff\xfe invalid utf-8",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := telegram.MarkdownToHTML(md)
		plain, err := testkit.ParseTelegramHTML(out)
		if err != nil {
			t.Fatalf("MarkdownToHTML(%q) = %q: Telegram would refuse it: %v", md, out, err)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("MarkdownToHTML(%q) is not valid UTF-8: %q", md, out)
		}
		// Outside tags, every & starts one of the entities the converter writes.
		inTag := false
		for i := 0; i < len(out); i++ {
			switch c := out[i]; {
			case c == '<':
				inTag = true
			case c == '>' && inTag:
				inTag = false
			case c == '>':
				t.Fatalf("bare > at %d in %q", i, out)
			case c == '&' && !inTag:
				rest := out[i:]
				if !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") && !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&quot;") {
					t.Fatalf("unescaped & at %d in %q", i, out)
				}
			}
		}
		n := 0
		for _, r := range plain {
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
		}
		if got := telegram.VisibleLength(out); got != n {
			t.Fatalf("VisibleLength(%q) = %d, Telegram counts %d", out, got, n)
		}
	})
}
