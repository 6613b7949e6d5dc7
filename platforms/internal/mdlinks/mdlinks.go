// Package mdlinks rewrites Markdown images as links, for platforms whose
// Markdown cannot show an image by URL (WeCom, Feishu cards): the reader
// gets a link to the picture instead of a broken image or raw syntax.
package mdlinks

import "strings"

// ImagesToLinks turns every Markdown image outside code into a link to the
// same destination: ![alt](url) becomes [alt](url), and an image without
// alt text becomes [url](url) so that the link stays visible. Reference
// images (![alt][ref]) become reference links. Code spans and fenced code
// blocks are left alone.
func ImagesToLinks(src string) string {
	if !strings.Contains(src, "![") {
		return src
	}
	var out strings.Builder
	out.Grow(len(src) + 16)
	lines := strings.SplitAfter(src, "\n")
	var fence string // the open fence ("```" or "~~~…"), or ""
	for _, line := range lines {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), f[:1])) == "":
				fence = ""
			}
			out.WriteString(line)
			continue
		}
		if fence != "" {
			out.WriteString(line)
			continue
		}
		out.WriteString(rewriteLine(line))
	}
	return out.String()
}

// fenceOf returns the fence that opens or closes a code block on line (3 or
// more backticks or tildes after at most 3 spaces), or "".
func fenceOf(line string) string {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return ""
	}
	rest := line[indent:]
	if rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return ""
	}
	n := len(rest) - len(strings.TrimLeft(rest, rest[:1]))
	if n < 3 {
		return ""
	}
	return rest[:n]
}

// rewriteLine rewrites the images of one line outside code spans.
func rewriteLine(s string) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			out.WriteString(s[i : i+2])
			i += 2
		case s[i] == '`':
			n := runLen(s[i:], '`')
			if end := closingRun(s[i+n:], n); end >= 0 {
				out.WriteString(s[i : i+n+end+n])
				i += n + end + n
			} else {
				out.WriteString(s[i : i+n])
				i += n
			}
		case s[i] == '!' && i+1 < len(s) && s[i+1] == '[':
			alt, ok := bracketed(s[i+1:])
			if !ok {
				out.WriteByte('!')
				i++
				continue
			}
			after := i + 1 + len(alt) + 2
			label := rewriteLine(alt)
			if strings.TrimSpace(alt) == "" && after < len(s) && s[after] == '(' {
				label = destination(s[after:])
			}
			out.WriteString("[" + label + "]")
			i = after
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	return out.String()
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun finds a run of exactly n backticks in s and returns its
// offset, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := runLen(s[i:], '`')
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// bracketed returns the text between the '[' at s[0] and its matching ']'.
func bracketed(s string) (string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return s[1:i], true
			}
		}
	}
	return "", false
}

// destination returns the URL of the "(url "title")" at the start of s.
func destination(s string) string {
	inner := s[1:]
	if end := strings.IndexByte(inner, ')'); end >= 0 {
		inner = inner[:end]
	}
	inner = strings.TrimSpace(inner)
	if strings.HasPrefix(inner, "<") {
		if end := strings.IndexByte(inner, '>'); end > 0 {
			return inner[1:end]
		}
	}
	if end := strings.IndexAny(inner, " \t"); end >= 0 {
		inner = inner[:end]
	}
	return inner
}
