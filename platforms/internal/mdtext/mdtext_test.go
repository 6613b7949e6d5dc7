package mdtext

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	anchor := func(label, url string) string { return `<a href="` + url + `">` + label + `</a>` }
	tests := []struct {
		name string
		md   string
		link LinkFunc
		want string
	}{
		{"plain", "hello world", nil, "hello world"},
		{"emphasis and code", "**bold** *it* ~~gone~~ `x := 1`", nil, "bold it gone x := 1"},
		{"heading", "# Title\nbody", nil, "Title\n\nbody"},
		{"link as text", "see [the docs](https://example.com/d)", nil, "see the docs (https://example.com/d)"},
		{"bare link", "<https://example.com>", nil, "https://example.com"},
		{"link as anchor", "see [docs](https://example.com/d)", anchor, `see <a href="https://example.com/d">docs</a>`},
		{"image becomes link", "![chart](https://example.com/c.png)", nil, "chart (https://example.com/c.png)"},
		{"lists", "- a\n- b\n\n1. one\n2. two", nil, "• a\n• b\n\n1. one\n2. two"},
		{"nested list", "- a\n  - b", nil, "• a\n  • b"},
		{"quote", "> quoted **text**", nil, "quoted text"},
		{"code block", "```go\nfmt.Println(1)\n```", nil, "fmt.Println(1)"},
		{"escapes and entities", `1\. not a list &amp; \*stars\*`, nil, "1. not a list & *stars*"},
		{"hard break", "a  \nb", nil, "a\nb"},
		{"rule", "a\n\n---\n\nb", nil, "a\n\n———\n\nb"},
		{"raw html kept", "x <b>y</b>", nil, "x <b>y</b>"},
		{"html block with an end line", "<script>\nx\n</script>\n\nafter", nil, "<script>\nx\n</script>\n\nafter"},
		{"stars alone are a rule", "**  **", nil, "———"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Render(tt.md, tt.link)); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.md, diff)
			}
		})
	}
}
