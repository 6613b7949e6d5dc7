package msgtext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

func TestTitle(t *testing.T) {
	tests := []struct {
		name string
		msg  push.Message
		max  int
		want string
	}{
		{"first line of text", push.Message{Content: "\n  disk   full \nmore"}, 32, "disk full"},
		{"cut with an ellipsis", push.Message{Content: "abcdefghij"}, 5, "abcd…"},
		{"no space before the ellipsis", push.Message{Content: "abc defgh"}, 5, "abc…"},
		{"CJK counts characters", push.Message{Content: "服务器磁盘已满请尽快处理"}, 6, "服务器磁盘…"},
		{"markdown is rendered first", push.Message{Type: push.MsgTypeMarkdown, Content: "## **Deployed** [v42](https://x)\n\nbody"}, 32, "Deployed v42"},
		{"markdown list", push.Message{Type: push.MsgTypeMarkdown, Content: "- first item\n- second"}, 32, "• first item"},
		{"image caption", push.Message{Type: push.MsgTypeImage, Content: "chart", ImageURL: "https://x.example/a.png"}, 32, "chart"},
		{"image name", push.Message{Type: push.MsgTypeImage, ImageURL: "https://x.example/dir/CPU%20load.png?x=1"}, 32, "CPU load.png"},
		{"image without a name", push.Message{Type: push.MsgTypeImage, ImageURL: "https://x.example/"}, 32, "image"},
	}
	for _, tt := range tests {
		if got := Title(tt.msg, tt.max); got != tt.want {
			t.Errorf("%s: Title = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Escaped text renders back to itself: nothing in it becomes markup.
func TestEscapeMarkdownRoundTrip(t *testing.T) {
	inputs := []string{
		"plain text",
		"*not bold* and _not italic_ and `not code`",
		"# not a heading",
		"- not a list\n+ nor this\n1. nor this\n2) nor this",
		"> not a quote",
		"[not](a link) ![nor](an image) <not@an.autolink> <b>not html</b>",
		"~~not struck~~ | not | a table |",
		"a\\b c\\*d",
		"line one\nline two\nline three",
		"===\n---",
		"1998. A great year",
		"100% & 5 < 6 > 4",
	}
	for _, in := range inputs {
		if got := Plain(EscapeMarkdown(in)); got != in {
			t.Errorf("Plain(EscapeMarkdown(%q)) = %q", in, got)
		}
	}
	if got := EscapeMarkdown("  indented"); !strings.HasPrefix(got, "\u00a0\u00a0indented") {
		t.Errorf("leading spaces: %q", got)
	}
}

func TestMarkdownImage(t *testing.T) {
	got := MarkdownImage("https://x.example/a b(1).png", "a [chart]")
	if want := `![a \[chart\]](https://x.example/a%20b%281%29.png)`; got != want {
		t.Fatalf("MarkdownImage = %q, want %q", got, want)
	}
	if p := Plain(got); p != "a [chart]" {
		t.Fatalf("the image's alt text renders as %q", p)
	}
}

func TestPlain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"**bold** _it_ `code` ~~s~~", "bold it code s"},
		{"# H\n\npara one\n\npara two", "H\n\npara one\n\npara two"},
		{"[label](https://x.example) ![alt](https://x.example/i.png)", "label alt"},
		{"1. a\n2. b\n   - c", "1. a\n2. b\n  • c"},
		{"> quote", "quote"},
		{"```\ncode\n```", "code"},
		{"<https://x.example>", "https://x.example"},
		{"a &amp; b", "a & b"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Plain(tt.in)); diff != "" {
			t.Errorf("Plain(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestCaptionAndOr(t *testing.T) {
	if c := Caption(push.Message{Content: " hi ", ImageURL: "https://x/a.png"}); c != "hi" {
		t.Errorf("Caption = %q", c)
	}
	if c := Caption(push.Message{ImageURL: "https://x/a.png"}); c != "a.png" {
		t.Errorf("Caption without content = %q", c)
	}
	if Or(" ", "d") != "d" || Or("x", "d") != "x" {
		t.Error("Or")
	}
}
