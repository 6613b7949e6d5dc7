// Package mdtext writes Markdown as text. Walk lays out what every text
// format shares (blank lines between blocks, list items, rules, raw HTML
// as text) and leaves headings, code, quotes and inline markup to a
// Dialect: Slack's mrkdwn and Telegram's HTML are dialects. Render is the
// plain-text dialect, for platforms that have no Markdown (WeChat
// customer-service messages) and for plain-text fallbacks (QQ without the
// Markdown grant): the markup characters go, the words, line structure,
// list numbering and link addresses stay.
package mdtext

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// LinkFunc writes a link whose visible text is label and whose address is
// url. label equals url for bare links (<https://…>, autolinks).
type LinkFunc func(label, url string) string

// TextLink writes a link as "label (url)", or the bare url when the label
// is the address itself or empty.
func TextLink(label, url string) string {
	if label == "" || label == url {
		return url
	}
	return label + " (" + url + ")"
}

// Render converts Markdown (CommonMark with GitHub strikethrough) to plain
// text. Headings become their own lines, emphasis and code marks are
// dropped, list items become "• " or numbered lines, block quotes and code
// blocks keep their text, images become links to the image, and links are
// written by link (TextLink when nil). Raw HTML is kept as text.
func Render(src string, link LinkFunc) string {
	if link == nil {
		link = TextLink
	}
	return strings.TrimSpace(Walk(src, plain{link: link}, Layout{ListIndent: "  "}))
}

// plain is the Dialect of plain text.
type plain struct{ link LinkFunc }

func (plain) Escape(s string) string { return s }

func (plain) Heading(w *Walker, h *ast.Heading) { w.Inlines(h) }

func (plain) CodeBlock(w *Walker, code, _ string) { w.WriteString(code) }

func (plain) Quote(w *Walker, q *ast.Blockquote, depth int) { w.Blocks(q, depth) }

func (plain) CodeSpan(w *Walker, code string) { w.WriteString(code) }

func (p plain) Inline(w *Walker, n ast.Node) {
	switch n := n.(type) {
	case *ast.Link:
		p.writeLink(w, PlainText(n, w.Source()), string(n.Destination))
	case *ast.AutoLink:
		p.writeLink(w, string(n.Label(w.Source())), string(n.URL(w.Source())))
	case *ast.Image:
		p.writeLink(w, PlainText(n, w.Source()), string(n.Destination))
	default:
		w.Inlines(n)
	}
}

func (p plain) writeLink(w *Walker, label, dest string) {
	if dest = strings.TrimSpace(dest); dest == "" {
		w.WriteString(label)
		return
	}
	w.WriteString(p.link(label, dest))
}

// PlainText is the text of an inline subtree (a link's label, an image's
// alt text) without markup, escapes or entity references, on one line.
func PlainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(t.Value(src)))))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}
