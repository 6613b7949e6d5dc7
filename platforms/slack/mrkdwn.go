package slack

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Mrkdwn converts Markdown (CommonMark with GitHub strikethrough) to
// Slack's mrkdwn: **bold** becomes *bold*, *italic* _italic_, ~~strike~~
// ~strike~, [text](url) <url|text>, headings bold lines, list items "•"
// or numbered lines, quotes "> " lines, code spans and blocks stay in
// backticks, images become links. &, < and > are escaped everywhere, as
// Slack requires; raw HTML shows as text.
func Mrkdwn(src string) string {
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough))
	doc := md.Parser().Parse(text.NewReader(source))
	r := mrkdwnRenderer{src: source}
	r.blocks(doc, 0)
	return strings.TrimSpace(r.out.String())
}

type mrkdwnRenderer struct {
	src        []byte
	out        bytes.Buffer
	pendingGap bool
	inLink     bool
}

// EscapeText escapes the three characters Slack's text parser reserves.
func EscapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// linkURL makes a URL safe inside <url|text>: the characters that end the
// URL or the link are percent-encoded.
func linkURL(u string) string {
	return strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20").Replace(strings.TrimSpace(u))
}

func (r *mrkdwnRenderer) gap() {
	if r.pendingGap && r.out.Len() > 0 {
		r.out.WriteString("\n\n")
	}
	r.pendingGap = false
}

func (r *mrkdwnRenderer) blocks(n ast.Node, depth int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.block(c, depth)
	}
}

func (r *mrkdwnRenderer) block(n ast.Node, depth int) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.gap()
		r.inlines(n)
		r.pendingGap = true
	case *ast.Heading:
		r.gap()
		r.out.WriteByte('*')
		r.inlines(n)
		r.out.WriteByte('*')
		r.pendingGap = true
	case *ast.ThematicBreak:
		r.gap()
		r.out.WriteString("———")
		r.pendingGap = true
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.gap()
		r.out.WriteString("```\n")
		r.lines(n)
		r.out.WriteString("\n```")
		r.pendingGap = true
	case *ast.HTMLBlock:
		r.gap()
		r.lines(n)
		r.pendingGap = true
	case *ast.Blockquote:
		r.gap()
		inner := mrkdwnRenderer{src: r.src}
		inner.blocks(n, depth)
		for i, line := range strings.Split(strings.TrimSpace(inner.out.String()), "\n") {
			if i > 0 {
				r.out.WriteByte('\n')
			}
			r.out.WriteString("> " + line)
		}
		r.pendingGap = true
	case *ast.List:
		r.gap()
		r.list(n, depth)
		r.pendingGap = true
	default:
		r.blocks(n, depth)
	}
}

func (r *mrkdwnRenderer) list(l *ast.List, depth int) {
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			r.out.WriteByte('\n')
		}
		r.out.WriteString(strings.Repeat("    ", depth))
		if l.IsOrdered() {
			r.out.WriteString(strconv.Itoa(num) + ". ")
			num++
		} else {
			r.out.WriteString("• ")
		}
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			if c != item.FirstChild() {
				r.out.WriteByte('\n')
			}
			r.pendingGap = false
			switch c := c.(type) {
			case *ast.List:
				if c == item.FirstChild() {
					r.out.WriteByte('\n')
				}
				r.list(c, depth+1)
			case *ast.Paragraph, *ast.TextBlock:
				r.inlines(c)
			default:
				r.block(c, depth+1)
			}
		}
		r.pendingGap = false
	}
}

// lines writes a block's raw lines, and an HTML block's end line,
// escaped, without the last newline.
func (r *mrkdwnRenderer) lines(n ast.Node) {
	ls := n.Lines()
	var b strings.Builder
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(r.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(r.src))
	}
	r.out.WriteString(EscapeText(strings.TrimRight(b.String(), "\n")))
}

func (r *mrkdwnRenderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *mrkdwnRenderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(r.src)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		r.out.WriteString(EscapeText(string(v)))
		if n.HardLineBreak() || n.SoftLineBreak() {
			r.out.WriteByte('\n')
		}
	case *ast.String:
		r.out.WriteString(EscapeText(string(n.Value)))
	case *ast.CodeSpan:
		r.out.WriteByte('`')
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				r.out.WriteString(EscapeText(string(t.Value(r.src))))
			case *ast.String:
				r.out.WriteString(EscapeText(string(t.Value)))
			}
		}
		r.out.WriteByte('`')
	case *ast.Emphasis:
		mark := "_"
		if n.Level >= 2 {
			mark = "*"
		}
		r.out.WriteString(mark)
		r.inlines(n)
		r.out.WriteString(mark)
	case *extast.Strikethrough:
		r.out.WriteByte('~')
		r.inlines(n)
		r.out.WriteByte('~')
	case *ast.Link:
		r.link(string(n.Destination), n)
	case *ast.AutoLink:
		u := string(n.URL(r.src))
		label := string(n.Label(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		if r.inLink {
			r.out.WriteString(EscapeText(label))
			return
		}
		r.out.WriteString("<" + linkURL(u) + "|" + EscapeText(label) + ">")
	case *ast.Image:
		r.link(string(n.Destination), n)
	case *ast.RawHTML:
		segs := n.Segments
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			r.out.WriteString(EscapeText(string(seg.Value(r.src))))
		}
	default:
		r.inlines(n)
	}
}

// link writes <url|label>; a link inside a link keeps only its label.
func (r *mrkdwnRenderer) link(dest string, n ast.Node) {
	if r.inLink || strings.TrimSpace(dest) == "" {
		r.inlines(n)
		return
	}
	r.inLink = true
	inner := mrkdwnRenderer{src: r.src, inLink: true}
	inner.inlines(n)
	r.inLink = false
	label := strings.ReplaceAll(inner.out.String(), "\n", " ")
	if label == "" {
		label = EscapeText(dest)
	}
	r.out.WriteString("<" + linkURL(dest) + "|" + label + ">")
}
