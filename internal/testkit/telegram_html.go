package testkit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseTelegramHTML parses text in Telegram's parse_mode HTML the way the
// Bot API does and returns the visible text. It refuses what Telegram
// refuses: tags outside Telegram's set, unbalanced or mis-nested tags, a
// bare '<', and tags missing their required attribute. Entities &lt; &gt;
// &amp; &quot; and numeric references are decoded; other '&' sequences stay
// literal.
func ParseTelegramHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", tgErrorf("Unclosed start tag at byte offset %d", i)
			}
			raw := s[i+1 : i+end]
			if strings.HasPrefix(raw, "/") {
				name := strings.ToLower(strings.TrimSpace(raw[1:]))
				if len(stack) == 0 {
					return "", tgErrorf("Unexpected end tag at byte offset %d", i)
				}
				if top := stack[len(stack)-1]; top != name {
					return "", tgErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top, name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs, err := parseTag(raw)
				if err != nil {
					return "", tgErrorf("%v at byte offset %d", err, i)
				}
				if err := checkTag(name, attrs); err != nil {
					return "", err
				}
				if len(stack) > 0 {
					top := stack[len(stack)-1]
					if (top == "code" && name != "code") || (top == "pre" && name != "code") {
						return "", tgErrorf("Can't nest tag \"%s\" inside \"%s\"", name, top)
					}
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '&':
			if r, n := decodeEntity(s[i:]); n > 0 {
				out.WriteRune(r)
				i += n
			} else {
				out.WriteByte('&')
				i++
			}
		case '>':
			out.WriteByte('>')
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			out.WriteRune(r)
			i += size
		}
	}
	if len(stack) > 0 {
		return "", tgErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1])
	}
	return out.String(), nil
}

func parseTag(raw string) (string, map[string]string, error) {
	raw = strings.TrimSpace(raw)
	name := raw
	rest := ""
	if i := strings.IndexAny(raw, " \t\n"); i >= 0 {
		name, rest = raw[:i], raw[i+1:]
	}
	name = strings.ToLower(name)
	if name == "" {
		return "", nil, tgErrorf("Empty tag name")
	}
	attrs := make(map[string]string)
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			attrs[strings.ToLower(rest)] = ""
			break
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		rest = strings.TrimSpace(rest[eq+1:])
		var val string
		if strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, `'`) {
			q := rest[0]
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return "", nil, tgErrorf("Unclosed attribute value")
			}
			val, rest = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexAny(rest, " \t\n")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		decoded, err := ParseTelegramHTML(val)
		if err != nil || strings.ContainsRune(val, '<') {
			return "", nil, tgErrorf("Bad attribute value")
		}
		attrs[key] = decoded
	}
	return name, attrs, nil
}

func checkTag(name string, attrs map[string]string) error {
	switch name {
	case "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "tg-spoiler", "code", "pre":
		return nil
	case "blockquote":
		return nil
	case "span":
		if attrs["class"] != "tg-spoiler" {
			return tgErrorf("Tag \"span\" must have class \"tg-spoiler\"")
		}
		return nil
	case "a":
		if _, ok := attrs["href"]; !ok {
			return tgErrorf("Tag \"a\" must have attribute \"href\"")
		}
		return nil
	case "tg-emoji":
		if _, ok := attrs["emoji-id"]; !ok {
			return tgErrorf("Tag \"tg-emoji\" must have attribute \"emoji-id\"")
		}
		return nil
	}
	return tgErrorf("Unsupported start tag \"%s\"", name)
}

// decodeEntity decodes the entity at the start of s, returning the rune
// and its length, or 0 when s does not start with a supported entity.
func decodeEntity(s string) (rune, int) {
	for name, r := range map[string]rune{"&lt;": '<', "&gt;": '>', "&amp;": '&', "&quot;": '"'} {
		if strings.HasPrefix(s, name) {
			return r, len(name)
		}
	}
	if strings.HasPrefix(s, "&#") {
		end := strings.IndexByte(s, ';')
		if end < 3 || end > 12 {
			return 0, 0
		}
		num := s[2:end]
		base := 10
		if num[0] == 'x' || num[0] == 'X' {
			num, base = num[1:], 16
		}
		v, err := strconv.ParseUint(num, base, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return 0, 0
		}
		return rune(v), end + 1
	}
	return 0, 0
}

// tgParseError is an error worded as the Bot API words it (capitalized).
type tgParseError string

func (e tgParseError) Error() string { return string(e) }

func tgErrorf(format string, args ...any) error {
	return tgParseError(fmt.Sprintf(format, args...))
}
