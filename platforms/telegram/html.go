package telegram

import (
	"bytes"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MarkdownToHTML converts Markdown (CommonMark with GitHub strikethrough)
// to the HTML subset that Telegram's parse_mode HTML accepts: b, i, s,
// code, pre (with a language class), a href and blockquote. Headings become
// bold lines, list items become "•" or numbered lines, images become links,
// raw HTML is shown as text. Outside tags, <, > and & are always escaped,
// and every tag is closed in the order it was opened.
func MarkdownToHTML(src string) string {
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough))
	doc := md.Parser().Parse(text.NewReader(source))
	r := renderer{src: source}
	r.blocks(doc, 0)
	return strings.TrimSpace(r.out.String())
}

type renderer struct {
	src        []byte
	out        bytes.Buffer
	inQuote    bool // Telegram does not nest blockquotes
	linkDepth  int  // Telegram does not nest links
	pendingGap bool // a blank line is owed before the next block
}

func (r *renderer) gap() {
	if r.pendingGap && r.out.Len() > 0 {
		r.out.WriteString("\n\n")
	}
	r.pendingGap = false
}

// blocks renders the block children of n. indent is the list nesting
// depth, used to indent nested list items.
func (r *renderer) blocks(n ast.Node, indent int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.block(c, indent)
	}
}

func (r *renderer) block(n ast.Node, indent int) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.gap()
		r.inlines(n)
		r.pendingGap = true
	case *ast.Heading:
		r.gap()
		r.out.WriteString("<b>")
		r.inlines(n)
		r.out.WriteString("</b>")
		r.pendingGap = true
	case *ast.ThematicBreak:
		r.gap()
		r.out.WriteString("———")
		r.pendingGap = true
	case *ast.FencedCodeBlock:
		r.gap()
		lang := sanitizeLanguage(string(n.Language(r.src)))
		if lang != "" {
			r.out.WriteString(`<pre><code class="language-` + lang + `">`)
		} else {
			r.out.WriteString("<pre>")
		}
		r.lines(n)
		if lang != "" {
			r.out.WriteString("</code></pre>")
		} else {
			r.out.WriteString("</pre>")
		}
		r.pendingGap = true
	case *ast.CodeBlock:
		r.gap()
		r.out.WriteString("<pre>")
		r.lines(n)
		r.out.WriteString("</pre>")
		r.pendingGap = true
	case *ast.HTMLBlock:
		r.gap()
		r.lines(n)
		if n.HasClosure() {
			r.out.WriteString(escape(string(n.ClosureLine.Value(r.src))))
		}
		trimTrailingNewlines(&r.out)
		r.pendingGap = true
	case *ast.Blockquote:
		r.gap()
		if r.inQuote {
			r.blocks(n, indent)
		} else {
			r.inQuote = true
			r.out.WriteString("<blockquote>")
			r.blocks(n, indent)
			trimTrailingNewlines(&r.out)
			r.out.WriteString("</blockquote>")
			r.inQuote = false
		}
		r.pendingGap = true
	case *ast.List:
		r.gap()
		r.list(n, indent)
		r.pendingGap = true
	default:
		// Unknown blocks (from extensions) render their children.
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

// lines writes a block's raw lines, escaped, without the last newline.
func (r *renderer) lines(n ast.Node) {
	ls := n.Lines()
	var b strings.Builder
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(r.src))
	}
	r.out.WriteString(escape(strings.TrimRight(b.String(), "\n")))
}

func (r *renderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *renderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		r.text(n.Value(r.src), n.IsRaw())
		if n.HardLineBreak() || n.SoftLineBreak() {
			r.out.WriteByte('\n')
		}
	case *ast.String:
		r.text(n.Value, n.IsRaw() || n.IsCode())
	case *ast.CodeSpan:
		r.out.WriteString("<code>")
		var b bytes.Buffer
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				b.Write(t.Value(r.src))
			case *ast.String:
				b.Write(t.Value)
			}
		}
		r.out.WriteString(escape(b.String()))
		r.out.WriteString("</code>")
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		r.out.WriteString("<" + tag + ">")
		r.inlines(n)
		r.out.WriteString("</" + tag + ">")
	case *extast.Strikethrough:
		r.out.WriteString("<s>")
		r.inlines(n)
		r.out.WriteString("</s>")
	case *ast.Link:
		r.link(string(n.Destination), n)
	case *ast.AutoLink:
		u := string(n.URL(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
			u = "mailto:" + u
		}
		label := string(n.Label(r.src))
		if href, ok := safeHref(u); ok && r.linkDepth == 0 {
			r.out.WriteString(`<a href="` + escapeAttr(href) + `">` + escape(label) + "</a>")
		} else {
			r.out.WriteString(escape(label))
		}
	case *ast.Image:
		// Telegram cannot show an image inside a text message: link it.
		alt := plainText(n, r.src)
		if alt == "" {
			alt = string(n.Destination)
		}
		if href, ok := safeHref(string(n.Destination)); ok && r.linkDepth == 0 {
			r.out.WriteString(`<a href="` + escapeAttr(href) + `">` + escape(alt) + "</a>")
		} else {
			r.out.WriteString(escape(alt))
		}
	case *ast.RawHTML:
		segs := n.Segments
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			r.out.WriteString(escape(string(seg.Value(r.src))))
		}
	default:
		r.inlines(n)
	}
}

func (r *renderer) link(dest string, n ast.Node) {
	href, ok := safeHref(dest)
	if !ok || r.linkDepth > 0 {
		r.inlines(n)
		return
	}
	r.linkDepth++
	r.out.WriteString(`<a href="` + escapeAttr(href) + `">`)
	start := r.out.Len()
	r.inlines(n)
	if r.out.Len() == start { // an empty label: show the address
		r.out.WriteString(escape(dest))
	}
	r.out.WriteString("</a>")
	r.linkDepth--
}

// text writes a text segment, resolving Markdown escapes and entity
// references unless it is raw, then escaping it for Telegram.
func (r *renderer) text(v []byte, raw bool) {
	if !raw {
		v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
	}
	r.out.WriteString(escape(string(v)))
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
			b.Write(util.UnescapePunctuations(t.Value(src)))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// safeHref accepts only link schemes Telegram opens: http, https, tg and
// mailto.
func safeHref(dest string) (string, bool) {
	dest = strings.TrimSpace(dest)
	u, err := url.Parse(dest)
	if err != nil || dest == "" {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "tg", "mailto":
		return dest, true
	}
	return "", false
}

func sanitizeLanguage(lang string) string {
	var b strings.Builder
	for _, c := range lang {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '#' {
			b.WriteRune(c)
		}
		if b.Len() >= 32 {
			break
		}
	}
	return b.String()
}

// escape escapes text for Telegram HTML: only <, > and & need it. Invalid
// UTF-8 and NUL become U+FFFD.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range s {
		switch c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case 0, utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// escapeAttr escapes an attribute value, which is also quoted.
func escapeAttr(s string) string {
	return strings.ReplaceAll(escape(s), `"`, "&quot;")
}

func trimTrailingNewlines(b *bytes.Buffer) {
	for b.Len() > 0 && b.Bytes()[b.Len()-1] == '\n' {
		b.Truncate(b.Len() - 1)
	}
}

// VisibleLength is the length Telegram counts for a text in parse_mode
// HTML: the characters left after tags are removed and entities decoded, in
// UTF-16 code units.
func VisibleLength(html string) int {
	n := 0
	for i := 0; i < len(html); {
		c := html[i]
		switch {
		case c == '<':
			j := strings.IndexByte(html[i:], '>')
			if j < 0 {
				return n + utf16Len(html[i:])
			}
			i += j + 1
		case c == '&':
			j := strings.IndexByte(html[i:], ';')
			if j > 0 && j <= 10 {
				n++
				i += j + 1
			} else {
				n++
				i++
			}
		default:
			r, size := utf8.DecodeRuneInString(html[i:])
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
			i += size
		}
	}
	return n
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
