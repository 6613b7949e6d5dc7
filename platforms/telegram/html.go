package telegram

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald/platforms/internal/mdtext"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MarkdownToHTML converts Markdown (CommonMark with GitHub strikethrough
// and Telegram's ||spoiler||) to the HTML subset of Telegram's parse_mode
// HTML: b, i, s, tg-spoiler, code, pre (with a language class), a href and
// blockquote. Headings become bold lines, list items "•" or numbered
// lines, thematic breaks a line of dashes, images links to the image, raw
// HTML visible text. Outside tags, <, > and & are always escaped, and
// every tag is closed in the order it was opened.
//
// The output also keeps Telegram's nesting rules, so that Telegram keeps
// every entity: code is never inside another entity except a blockquote
// (a code span inside bold text closes the bold around it; inside a link it
// is plain text), no entity is nested in one of its own kind, links are
// never nested, and blockquotes are never nested (an inner quote is
// flattened into the outer one).
func MarkdownToHTML(src string) string {
	layout := mdtext.Layout{ListIndent: "  ", HideComments: true, Extensions: []goldmark.Extender{spoilers{}}}
	return strings.TrimSpace(dropEmptyTags(mdtext.Walk(src, &renderer{}, layout)))
}

// renderer is the mdtext.Dialect of Telegram's HTML.
type renderer struct {
	inQuote   bool     // Telegram does not nest blockquotes
	linkDepth int      // Telegram does not nest links
	open      []string // formatting tags open around the current text
}

// Escape implements mdtext.Dialect.
func (*renderer) Escape(s string) string { return escape(s) }

// Heading implements mdtext.Dialect: a bold line.
func (r *renderer) Heading(w *mdtext.Walker, h *ast.Heading) {
	r.format(w, "b", func() { w.Inlines(h) })
}

// CodeBlock implements mdtext.Dialect: a pre, with the language of a
// fenced block.
func (*renderer) CodeBlock(w *mdtext.Walker, code, lang string) {
	if lang = sanitizeLanguage(lang); lang != "" {
		w.WriteString(`<pre><code class="language-` + lang + `">` + code + "</code></pre>")
	} else {
		w.WriteString("<pre>" + code + "</pre>")
	}
}

// Quote implements mdtext.Dialect: a blockquote, into which a quote
// inside it is flattened.
func (r *renderer) Quote(w *mdtext.Walker, q *ast.Blockquote, depth int) {
	if r.inQuote {
		w.Blocks(q, depth)
		return
	}
	r.inQuote = true
	w.WriteString("<blockquote>")
	w.Blocks(q, depth)
	w.TrimTrailingNewlines()
	w.WriteString("</blockquote>")
	r.inQuote = false
}

// format wraps what body writes in a formatting tag, unless that tag is
// already open (Telegram does not nest an entity in one of its kind).
func (r *renderer) format(w *mdtext.Walker, tag string, body func()) {
	for _, t := range r.open {
		if t == tag {
			body()
			return
		}
	}
	r.open = append(r.open, tag)
	w.WriteString("<" + tag + ">")
	body()
	w.WriteString("</" + tag + ">")
	r.open = r.open[:len(r.open)-1]
}

// CodeSpan implements mdtext.Dialect. Telegram keeps code only outside
// other entities, so open formatting is closed around it and opened again;
// in a link, where that would split the link, the code is plain text.
func (r *renderer) CodeSpan(w *mdtext.Walker, code string) {
	if r.linkDepth > 0 {
		w.WriteString(code)
		return
	}
	for i := len(r.open) - 1; i >= 0; i-- {
		w.WriteString("</" + r.open[i] + ">")
	}
	w.WriteString("<code>" + code + "</code>")
	for _, t := range r.open {
		w.WriteString("<" + t + ">")
	}
}

// Inline implements mdtext.Dialect.
func (r *renderer) Inline(w *mdtext.Walker, n ast.Node) {
	switch n := n.(type) {
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		r.format(w, tag, func() { w.Inlines(n) })
	case *extast.Strikethrough:
		r.format(w, "s", func() { w.Inlines(n) })
	case *spoiler:
		r.format(w, "tg-spoiler", func() { w.Inlines(n) })
	case *ast.Link:
		r.link(w, string(n.Destination), n)
	case *ast.AutoLink:
		label := string(n.Label(w.Source()))
		if href, ok := safeHref(mdtext.AutoLinkURL(n, w.Source())); ok && r.linkDepth == 0 {
			w.WriteString(`<a href="` + escapeAttr(href) + `">` + escape(label) + "</a>")
		} else {
			w.WriteString(escape(label))
		}
	case *ast.Image:
		// Telegram cannot show an image inside a text message: link it.
		alt := mdtext.PlainText(n, w.Source())
		if alt == "" {
			alt = string(n.Destination)
		}
		if href, ok := safeHref(string(n.Destination)); ok && r.linkDepth == 0 {
			w.WriteString(`<a href="` + escapeAttr(href) + `">` + escape(alt) + "</a>")
		} else {
			w.WriteString(escape(alt))
		}
	default:
		w.Inlines(n)
	}
}

func (r *renderer) link(w *mdtext.Walker, dest string, n ast.Node) {
	href, ok := safeHref(dest)
	if !ok || r.linkDepth > 0 {
		w.Inlines(n)
		return
	}
	r.linkDepth++
	w.WriteString(`<a href="` + escapeAttr(href) + `">`)
	start := w.Len()
	w.Inlines(n)
	if w.Len() == start { // an empty label: show the address
		w.WriteString(escape(dest))
	}
	w.WriteString("</a>")
	r.linkDepth--
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

// dropEmptyTags removes formatting tag pairs left empty (a code span at
// the start or end of bold text closes and reopens the bold around it).
func dropEmptyTags(s string) string {
	for {
		t := s
		for _, tag := range []string{"b", "i", "s", "tg-spoiler"} {
			t = strings.ReplaceAll(t, "<"+tag+"></"+tag+">", "")
		}
		if t == s {
			return s
		}
		s = t
	}
}

// VisibleLength is the length Telegram counts for a text in parse_mode
// HTML: the characters left after tags are removed and entities decoded
// (&lt; &gt; &amp; &quot; with or without ';', and numeric references;
// any other '&' is itself), in UTF-16 code units.
func VisibleLength(html string) int {
	n := 0
	for i := 0; i < len(html); {
		switch html[i] {
		case '<':
			j := strings.IndexByte(html[i:], '>')
			if j < 0 {
				return n + utf16Len(html[i:])
			}
			i += j + 1
		case '&':
			if r, size := decodeEntity(html[i:]); size > 0 {
				n += utf16Len(string(r))
				i += size
			} else {
				n++
				i++
			}
		default:
			r, size := utf8.DecodeRuneInString(html[i:])
			n += utf16Len(string(r))
			i += size
		}
	}
	return n
}

// decodeEntity decodes an HTML entity at the start of s as Telegram does,
// returning the character and the bytes it takes, or 0 bytes when s does
// not start with one Telegram decodes.
func decodeEntity(s string) (rune, int) {
	if len(s) < 2 || s[0] != '&' {
		return 0, 0
	}
	end := 1
	var r rune
	if s[1] == '#' {
		end = 2
		base := 10
		if end < len(s) && s[end] == 'x' {
			base, end = 16, end+1
		}
		start := end
		for end < len(s) && isDigit(s[end], base) {
			end++
		}
		v, err := strconv.ParseUint(s[start:end], base, 32)
		if err != nil || v == 0 || v >= 0x10ffff || end >= 10 {
			return 0, 0
		}
		r = rune(v)
	} else {
		for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z') {
			end++
		}
		switch s[1:end] {
		case "lt":
			r = '<'
		case "gt":
			r = '>'
		case "amp":
			r = '&'
		case "quot":
			r = '"'
		default:
			return 0, 0
		}
	}
	if end < len(s) && s[end] == ';' {
		end++
	}
	return r, end
}

func isDigit(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	return base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
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

// spoilers is a goldmark extension for Telegram's ||spoiler|| syntax.
type spoilers struct{}

// Extend implements goldmark.Extender.
func (spoilers) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(parser.WithInlineParsers(util.Prioritized(spoilerParser{}, 500)))
}

// kindSpoiler is the AST kind of a spoiler (registered once, like
// goldmark's own kinds).
var kindSpoiler = ast.NewNodeKind("TelegramSpoiler")

// spoiler is a ||spoiler|| span.
type spoiler struct{ ast.BaseInline }

// Kind implements ast.Node.
func (*spoiler) Kind() ast.NodeKind { return kindSpoiler }

// Dump implements ast.Node.
func (s *spoiler) Dump(source []byte, level int) { ast.DumpHelper(s, source, level, nil, nil) }

// spoilerDelimiters matches "||" pairs.
type spoilerDelimiters struct{}

func (spoilerDelimiters) IsDelimiter(b byte) bool { return b == '|' }

func (spoilerDelimiters) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char && opener.OriginalLength == 2 && closer.OriginalLength == 2
}

func (spoilerDelimiters) OnMatch(int) ast.Node { return &spoiler{} }

// spoilerParser parses "||" delimiters; a single "|" stays text (tables
// and pipes in prose are untouched).
type spoilerParser struct{}

func (spoilerParser) Trigger() []byte { return []byte{'|'} }

func (spoilerParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 2, spoilerDelimiters{})
	if node == nil || node.OriginalLength != 2 || before == '|' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (spoilerParser) CloseBlock(ast.Node, parser.Context) {}
