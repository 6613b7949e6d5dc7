package slack

import (
	"strings"

	"github.com/heraldpush/herald/platforms/internal/mdtext"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

// Mrkdwn converts Markdown (CommonMark with GitHub strikethrough) to
// Slack's mrkdwn: **bold** becomes *bold*, *italic* _italic_, ~~strike~~
// ~strike~, [text](url) <url|text>, headings bold lines, list items "•"
// or numbered lines, quotes "> " lines, code spans and blocks stay in
// backticks, images become links. &, < and > are escaped everywhere, as
// Slack requires; raw HTML shows as text.
func Mrkdwn(src string) string {
	return strings.TrimSpace(mdtext.Walk(src, &mrkdwn{}, mdtext.Layout{ListIndent: "    "}))
}

// mrkdwn is the mdtext.Dialect of Slack's mrkdwn.
type mrkdwn struct {
	inLink bool // Slack does not nest links
}

// The replacers are built once (a strings.Replacer is immutable and safe
// for concurrent use); building one compiles its table, which cost more
// than the replacing.
var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	urlEscaper  = strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20")
)

// EscapeText escapes the three characters Slack's text parser reserves.
func EscapeText(s string) string { return textEscaper.Replace(s) }

// linkURL makes a URL safe inside <url|text>: the characters that end the
// URL or the link are percent-encoded.
func linkURL(u string) string { return urlEscaper.Replace(strings.TrimSpace(u)) }

// Escape implements mdtext.Dialect.
func (*mrkdwn) Escape(s string) string { return EscapeText(s) }

// Heading implements mdtext.Dialect: a bold line.
func (*mrkdwn) Heading(w *mdtext.Walker, h *ast.Heading) {
	w.WriteString("*")
	w.Inlines(h)
	w.WriteString("*")
}

// CodeBlock implements mdtext.Dialect: the code between ``` lines.
func (*mrkdwn) CodeBlock(w *mdtext.Walker, code, _ string) {
	w.WriteString("```\n" + code + "\n```")
}

// Quote implements mdtext.Dialect: every line of the quote starts with "> ".
func (*mrkdwn) Quote(w *mdtext.Walker, q *ast.Blockquote, depth int) {
	inner := w.Capture(func() { w.Blocks(q, depth) })
	for i, line := range strings.Split(strings.TrimSpace(inner), "\n") {
		if i > 0 {
			w.WriteString("\n")
		}
		w.WriteString("> " + line)
	}
}

// CodeSpan implements mdtext.Dialect.
func (*mrkdwn) CodeSpan(w *mdtext.Walker, code string) { w.WriteString("`" + code + "`") }

// Inline implements mdtext.Dialect.
func (r *mrkdwn) Inline(w *mdtext.Walker, n ast.Node) {
	switch n := n.(type) {
	case *ast.Emphasis:
		mark := "_"
		if n.Level >= 2 {
			mark = "*"
		}
		w.WriteString(mark)
		w.Inlines(n)
		w.WriteString(mark)
	case *extast.Strikethrough:
		w.WriteString("~")
		w.Inlines(n)
		w.WriteString("~")
	case *ast.Link:
		r.link(w, string(n.Destination), n)
	case *ast.AutoLink:
		label := EscapeText(string(n.Label(w.Source())))
		if r.inLink {
			w.WriteString(label)
			return
		}
		w.WriteString("<" + linkURL(mdtext.AutoLinkURL(n, w.Source())) + "|" + label + ">")
	case *ast.Image:
		r.link(w, string(n.Destination), n)
	default:
		w.Inlines(n)
	}
}

// link writes <url|label>; a link inside a link keeps only its label.
func (r *mrkdwn) link(w *mdtext.Walker, dest string, n ast.Node) {
	if r.inLink || strings.TrimSpace(dest) == "" {
		w.Inlines(n)
		return
	}
	r.inLink = true
	label := strings.ReplaceAll(w.Capture(func() { w.Inlines(n) }), "\n", " ")
	r.inLink = false
	if label == "" {
		label = EscapeText(dest)
	}
	w.WriteString("<" + linkURL(dest) + "|" + label + ">")
}
