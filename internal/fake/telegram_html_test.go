package fake

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseTelegramHTML: the checker that the Telegram converter's tests
// rely on accepts what Telegram accepts and refuses what it refuses.
func TestParseTelegramHTML(t *testing.T) {
	cases := []struct {
		name, html, plain, err string
	}{
		{"tags and entities", `<b>a</b> <i>b</i> &lt;&gt;&amp;&quot; &#128512;&#x41`, `a b <>&" 😀A`, ""},
		{"other & is literal", "&nbsp; a & b", "&nbsp; a & b", ""},
		{"link", `<a href="https://e.com/?a=1&amp;b=2">x</a>`, "x", ""},
		{"pre with a language", `<pre><code class="language-go">x</code></pre>`, "x", ""},
		{"spoiler span", `<span class="tg-spoiler">s</span>`, "s", ""},
		{"bare <", "1 < 2", "", "Unclosed start tag"},
		{"unknown tag", "<p>x</p>", "", `Unsupported start tag "p"`},
		{"crossed tags", "<b><i>x</b></i>", "", "Unmatched end tag"},
		{"unclosed tag", "<b>x", "", "Can't find end tag"},
		{"stray end tag", "x</b>", "", "Unexpected end tag"},
		{"link without href", "<a>x</a>", "", `"a" must have attribute "href"`},
		{"span without the spoiler class", "<span>x</span>", "", `must have class "tg-spoiler"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain, err := ParseTelegramHTML(c.html)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseTelegramHTML(%q) = %q, %v; want an error with %q", c.html, plain, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTelegramHTML(%q): %v", c.html, err)
			}
			if diff := cmp.Diff(c.plain, plain); diff != "" {
				t.Errorf("ParseTelegramHTML(%q) (-want +got):\n%s", c.html, diff)
			}
		})
	}
}

// TestTelegramEntityProblem: each nesting rule Telegram enforces is found,
// and what Telegram keeps passes.
func TestTelegramEntityProblem(t *testing.T) {
	cases := []struct{ html, want string }{
		{"<b>a</b> <i>b</i> <code>c</code>", ""},
		{"<b>a <i>b</i> <s>c</s></b>", ""},
		{"<blockquote>q <pre>x</pre></blockquote>", ""},
		{`<a href="x"><b>bold link</b></a>`, ""},
		{"<b>a <strong>b</strong></b>", `"b" inside "b"`},
		{"<b>a <code>c</code></b>", "code and pre are inside nothing but a blockquote"},
		{"<pre>a <b>b</b></pre>", "code and pre contain no entities"},
		{`<a href="x">a <a href="y">b</a></a>`, `"a" inside "a"`},
		{"<blockquote>a <blockquote>b</blockquote></blockquote>", `"blockquote" inside "blockquote"`},
		{`<a href="x">a <blockquote>b</blockquote></a>`, "a blockquote inside a link"},
		{"<b>x", "Can't find end tag"},
	}
	for _, c := range cases {
		got := TelegramEntityProblem(c.html)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("TelegramEntityProblem(%q) = %q, want %q", c.html, got, c.want)
		}
	}
}
