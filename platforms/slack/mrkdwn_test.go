package slack_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/platforms/slack"
)

func TestMrkdwn(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bold and italic", "**bold** and *it* and _it2_", "*bold* and _it_ and _it2_"},
		{"bold italic", "***both***", "_*both*_"},
		{"strikethrough", "~~gone~~", "~gone~"},
		{"escapes", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"markdown escapes resolve", `\*not bold\* 1\. x`, "*not bold* 1. x"},
		{"link", "see [the docs](https://example.com/a?b=1|2)", "see <https://example.com/a?b=1%7C2|the docs>"},
		{"bold link text", "[**go** now](https://x.example)", "<https://x.example|*go* now>"},
		{"autolink", "<https://example.com>", "<https://example.com|https://example.com>"},
		{"email autolink", "<ops@example.com>", "<mailto:ops@example.com|ops@example.com>"},
		{"image becomes a link", "![chart](https://img.example.com/c.png)", "<https://img.example.com/c.png|chart>"},
		{"heading", "# Deployed\n\nv42", "*Deployed*\n\nv42"},
		{"lists", "- a\n- b\n  1. c\n  2. d", "• a\n• b\n    1. c\n    2. d"},
		{"ordered start", "3. x\n4. y", "3. x\n4. y"},
		{"quote", "> quoted\n> more\n\nafter", "> quoted\n> more\n\nafter"},
		{"code span", "run `rm -rf <dir>`", "run `rm -rf &lt;dir&gt;`"},
		{"code block", "```go\nif a < b {}\n```", "```\nif a &lt; b {}\n```"},
		{"raw html is text", "<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"},
		{"html block with an end line", "<!--\nnote\n-->\n\nafter", "&lt;!--\nnote\n--&gt;\n\nafter"},
		{"line breaks", "one\ntwo  \nthree", "one\ntwo\nthree"},
		{"rule", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"entities", "&copy; &amp;", "© &amp;"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, slack.Mrkdwn(tt.in)); diff != "" {
			t.Errorf("%s: Mrkdwn(%q) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}
