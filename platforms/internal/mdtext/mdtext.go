// Package mdtext renders Markdown as plain text for platforms that have no
// Markdown (WeChat customer-service messages) and for plain-text fallbacks
// (QQ without the Markdown grant): the markup characters go, the words,
// line structure, list numbering and link addresses stay.
package mdtext

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
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough))
	doc := md.Parser().Parse(text.NewReader(source))
	r := renderer{src: source, link: link}
	r.blocks(doc, 0)
	return strings.TrimSpace(r.out.String())
}

type renderer struct {
	src        []byte
	link       LinkFunc
	out        bytes.Buffer
	pendingGap bool
}

func (r *renderer) gap() {
	if r.pendingGap && r.out.Len() > 0 {
		r.out.WriteString("\n\n")
	}
	r.pendingGap = false
}

func (r *renderer) blocks(n ast.Node, indent int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.block(c, indent)
	}
}

func (r *renderer) block(n ast.Node, indent int) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		r.gap()
		r.inlines(n)
		r.pendingGap = true
	case *ast.ThematicBreak:
		r.gap()
		r.out.WriteString("———")
		r.pendingGap = true
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.gap()
		r.lines(n)
		r.pendingGap = true
	case *ast.HTMLBlock:
		r.gap()
		r.lines(n)
		r.pendingGap = true
	case *ast.Blockquote:
		r.gap()
		r.blocks(n, indent)
		r.pendingGap = true
	case *ast.List:
		r.gap()
		r.list(n, indent)
		r.pendingGap = true
	default:
		r.blocks(n, indent)
	}
}

func (r *renderer) list(l *ast.List, indent int) {
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			r.out.WriteByte('\n')
		}
		r.out.WriteString(strings.Repeat("  ", indent))
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
				r.list(c, indent+1)
			case *ast.Paragraph, *ast.TextBlock:
				r.inlines(c)
			default:
				r.block(c, indent+1)
			}
		}
		r.pendingGap = false
	}
}

// lines writes a block's raw lines, and an HTML block's end line, without
// the last newline.
func (r *renderer) lines(n ast.Node) {
	ls := n.Lines()
	var b bytes.Buffer
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(r.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(r.src))
	}
	r.out.Write(bytes.TrimRight(b.Bytes(), "\n"))
}

func (r *renderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(r.src)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		r.out.Write(v)
		if n.HardLineBreak() || n.SoftLineBreak() {
			r.out.WriteByte('\n')
		}
	case *ast.String:
		r.out.Write(n.Value)
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				r.out.Write(t.Value(r.src))
			case *ast.String:
				r.out.Write(t.Value)
			}
		}
	case *ast.Emphasis, *extast.Strikethrough:
		r.inlines(n)
	case *ast.Link:
		r.writeLink(plainText(n, r.src), string(n.Destination))
	case *ast.AutoLink:
		u := string(n.URL(r.src))
		r.writeLink(string(n.Label(r.src)), u)
	case *ast.Image:
		r.writeLink(plainText(n, r.src), string(n.Destination))
	case *ast.RawHTML:
		segs := n.Segments
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			r.out.Write(seg.Value(r.src))
		}
	default:
		r.inlines(n)
	}
}

func (r *renderer) writeLink(label, dest string) {
	if dest = strings.TrimSpace(dest); dest == "" {
		r.out.WriteString(label)
		return
	}
	r.out.WriteString(r.link(label, dest))
}

// plainText is the text of an inline subtree without markup.
func plainText(n ast.Node, src []byte) string {
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
