// Package msgtext holds the text rules that several providers share:
// plain text from Markdown, a short title derived from a message (for
// services that require one), Markdown escaping for services whose every
// message is Markdown, and how an image is named when it has no caption.
package msgtext

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldpush/herald/push"
)

// Title derives a notification title of at most max characters from a
// message: the first non-empty line of its text (of the rendered text for
// Markdown), shortened with "…" when longer. An image without a caption is
// titled by its file name.
func Title(m push.Message, max int) string {
	src := m.Content
	if m.Type == push.MsgTypeMarkdown {
		src = Plain(m.Content)
	}
	line := ""
	for _, l := range strings.Split(src, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			line = l
			break
		}
	}
	if line == "" {
		if m.Type == push.MsgTypeImage {
			line = ImageName(m.ImageURL)
		} else {
			line = "Message"
		}
	}
	return Truncate(line, max)
}

// Truncate shortens s to at most max characters (Unicode code points),
// ending it with "…" when it was cut.
func Truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	if max == 1 {
		return "…"
	}
	return strings.TrimRightFunc(string(r[:max-1]), unicode.IsSpace) + "…"
}

// ImageName is what an image without a caption is called: the file name of
// its URL ("chart.png"), or "image" when the URL has none.
func ImageName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "image"
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" || name == "" {
		return "image"
	}
	if un, err := url.PathUnescape(name); err == nil {
		name = un
	}
	return Truncate(name, 100)
}

// Caption is the text shown with an image: the message's content, or the
// image's name when there is none.
func Caption(m push.Message) string {
	if c := strings.TrimSpace(m.Content); c != "" {
		return c
	}
	return ImageName(m.ImageURL)
}

// MarkdownImage writes an image in Markdown, ![alt](url), with the
// characters that would end the URL early percent-encoded and the alt text
// escaped.
func MarkdownImage(raw, alt string) string {
	r := strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E")
	alt = strings.NewReplacer("[", `\[`, "]", `\]`, "\\", `\\`, "\n", " ").Replace(alt)
	return "![" + alt + "](" + r.Replace(raw) + ")"
}

// EscapeMarkdown makes plain text show as written on a service that renders
// every message as Markdown: characters that would start emphasis, code,
// links, HTML, tables or strikethrough are backslash-escaped, so are the
// characters that would make a line a heading, quote or list item, and
// every line break becomes a hard break.
func EscapeMarkdown(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteString("  \n")
		}
		b.WriteString(escapeLine(line))
	}
	return b.String()
}

func escapeLine(line string) string {
	var b strings.Builder
	// Leading spaces would make an indented code block: keep them as
	// non-breaking spaces.
	rest := strings.TrimLeft(line, " \t")
	for _, c := range line[:len(line)-len(rest)] {
		if c == '\t' {
			b.WriteString("\u00a0\u00a0\u00a0\u00a0")
		} else {
			b.WriteRune('\u00a0')
		}
	}
	// A line starting like a list item, heading, quote or rule.
	if rest != "" {
		switch rest[0] {
		case '-', '+', '=':
			b.WriteByte('\\')
		}
		if n := leadingDigits(rest); n > 0 && n < len(rest) && (rest[n] == '.' || rest[n] == ')') {
			b.WriteString(rest[:n])
			b.WriteByte('\\')
			rest = rest[n:]
		}
	}
	for _, c := range rest {
		switch c {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '~', '|', '#', '!':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Or returns s, or def when s is blank (a platform's empty error text).
func Or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
