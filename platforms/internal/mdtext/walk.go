package mdtext

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A Dialect writes what differs between the text formats Markdown is
// converted to: headings, code, quotes and inline markup. The Walker lays
// out the rest and hands literal text to Escape.
type Dialect interface {
	// Escape makes literal text safe in the format.
	Escape(s string) string
	// Heading writes a heading (its text is w.Inlines(h)).
	Heading(w *Walker, h *ast.Heading)
	// CodeBlock writes a fenced or indented code block: its escaped
	// text, without the last newline, and the fence's info string ("" for
	// none).
	CodeBlock(w *Walker, code, lang string)
	// Quote writes a block quote (its blocks are w.Blocks(q, depth)).
	Quote(w *Walker, q *ast.Blockquote, depth int)
	// CodeSpan writes an inline code span's escaped text.
	CodeSpan(w *Walker, code string)
	// Inline writes any other inline node: emphasis, strikethrough, links,
	// autolinks, images and the nodes of extensions. A node it has no
	// markup for writes its children (w.Inlines(n)).
	Inline(w *Walker, n ast.Node)
}

// Layout is what a format chooses of the shared layout.
type Layout struct {
	// ListIndent indents a nested list item once per level.
	ListIndent string
	// HideComments drops HTML comments instead of showing them as text.
	HideComments bool
	// Extensions are goldmark extensions besides GitHub strikethrough.
	Extensions []goldmark.Extender
}

// Walker writes a Markdown document through a Dialect. Blocks are
// separated by a blank line; paragraphs are their inline text; list items
// are "• " or numbered lines, nested ones indented; thematic breaks are a
// line of "———"; raw HTML is literal text. Text has its Markdown escapes
// and entity references resolved and is escaped by the Dialect.
type Walker struct {
	src        []byte
	out        *bytes.Buffer
	d          Dialect
	layout     Layout
	pendingGap bool // a blank line is owed before the next block
}

// Walk parses src (CommonMark with GitHub strikethrough and the layout's
// extensions) and writes it through d. The result is not trimmed.
func Walk(src string, d Dialect, layout Layout) string {
	w := &Walker{src: []byte(src), out: new(bytes.Buffer), d: d, layout: layout}
	md := goldmark.New(goldmark.WithExtensions(append([]goldmark.Extender{extension.Strikethrough}, layout.Extensions...)...))
	w.Blocks(md.Parser().Parse(text.NewReader(w.src)), 0)
	return w.out.String()
}

// Source is the Markdown source the nodes' segments point into.
func (w *Walker) Source() []byte { return w.src }

// WriteString writes s to the output as it is.
func (w *Walker) WriteString(s string) { w.out.WriteString(s) }

// Len is the number of bytes written so far.
func (w *Walker) Len() int { return w.out.Len() }

// TrimTrailingNewlines removes the newlines at the end of the output.
func (w *Walker) TrimTrailingNewlines() {
	for w.out.Len() > 0 && w.out.Bytes()[w.out.Len()-1] == '\n' {
		w.out.Truncate(w.out.Len() - 1)
	}
}

// Capture returns what write writes instead of writing it, as if it were
// the start of a document.
func (w *Walker) Capture(write func()) string {
	out, gap := w.out, w.pendingGap
	w.out, w.pendingGap = new(bytes.Buffer), false
	write()
	s := w.out.String()
	w.out, w.pendingGap = out, gap
	return s
}

func (w *Walker) gap() {
	if w.pendingGap && w.out.Len() > 0 {
		w.out.WriteString("\n\n")
	}
	w.pendingGap = false
}

// Blocks writes the block children of n. depth is the list nesting depth.
func (w *Walker) Blocks(n ast.Node, depth int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.block(c, depth)
	}
}

func (w *Walker) block(n ast.Node, depth int) {
	if h, ok := n.(*ast.HTMLBlock); ok && w.layout.HideComments && h.HTMLBlockType == ast.HTMLBlockType2 {
		return
	}
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		w.gap()
		w.Inlines(n)
	case *ast.Heading:
		w.gap()
		w.d.Heading(w, n)
	case *ast.ThematicBreak:
		w.gap()
		w.out.WriteString("———")
	case *ast.FencedCodeBlock:
		w.gap()
		w.d.CodeBlock(w, w.lines(n), string(n.Language(w.src)))
	case *ast.CodeBlock:
		w.gap()
		w.d.CodeBlock(w, w.lines(n), "")
	case *ast.HTMLBlock:
		w.gap()
		w.out.WriteString(w.lines(n))
	case *ast.Blockquote:
		w.gap()
		w.d.Quote(w, n, depth)
	case *ast.List:
		w.gap()
		w.list(n, depth)
	default:
		// Unknown blocks (from extensions) write their children.
		w.Blocks(n, depth)
		return
	}
	w.pendingGap = true
}

func (w *Walker) list(l *ast.List, depth int) {
	num := l.Start
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		if item != l.FirstChild() {
			w.out.WriteByte('\n')
		}
		w.out.WriteString(strings.Repeat(w.layout.ListIndent, depth))
		if l.IsOrdered() {
			w.out.WriteString(strconv.Itoa(num) + ". ")
			num++
		} else {
			w.out.WriteString("• ")
		}
		for c := item.FirstChild(); c != nil; c = c.NextSibling() {
			if c != item.FirstChild() {
				w.out.WriteByte('\n')
			}
			w.pendingGap = false
			switch c := c.(type) {
			case *ast.List:
				if c == item.FirstChild() {
					w.out.WriteByte('\n')
				}
				w.list(c, depth+1)
			case *ast.Paragraph, *ast.TextBlock:
				w.Inlines(c)
			default:
				w.block(c, depth+1)
			}
		}
		w.pendingGap = false
	}
}

// lines is a block's raw lines, and an HTML block's end line, escaped,
// without the last newline.
func (w *Walker) lines(n ast.Node) string {
	ls := n.Lines()
	var b strings.Builder
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(w.src))
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		b.Write(h.ClosureLine.Value(w.src))
	}
	return w.d.Escape(strings.TrimRight(b.String(), "\n"))
}

// Inlines writes the inline children of n.
func (w *Walker) Inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(c)
	}
}

func (w *Walker) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(w.src)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		w.out.WriteString(w.d.Escape(string(v)))
		if n.HardLineBreak() || n.SoftLineBreak() {
			w.out.WriteByte('\n')
		}
	case *ast.String:
		w.out.WriteString(w.d.Escape(string(n.Value)))
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Value(w.src))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		w.d.CodeSpan(w, w.d.Escape(b.String()))
	case *ast.RawHTML:
		segs := n.Segments
		var b strings.Builder
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			b.Write(seg.Value(w.src))
		}
		if w.layout.HideComments && strings.HasPrefix(b.String(), "<!--") {
			return
		}
		w.out.WriteString(w.d.Escape(b.String()))
	default:
		w.d.Inline(w, n)
	}
}

// AutoLinkURL is an autolink's address, with "mailto:" before an email
// address.
func AutoLinkURL(n *ast.AutoLink, src []byte) string {
	u := string(n.URL(src))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
		u = "mailto:" + u
	}
	return u
}
