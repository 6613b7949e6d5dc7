package fake

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseTelegramHTML parses text in Telegram's parse_mode HTML the way the
// Bot API does and returns the visible text. It refuses what Telegram
// refuses: tags outside Telegram's set, unbalanced or mis-nested tags, a
// bare '<', and tags missing their required attribute. Entities &lt; &gt;
// &amp; &quot; (with or without ';') and numeric references are decoded;
// other '&' sequences stay literal.
func ParseTelegramHTML(s string) (string, error) {
	plain, _, err := parseTelegramHTML(s)
	return plain, err
}

// TelegramEntity is a formatting entity parsed from Telegram HTML, with
// its place in the visible text in UTF-16 units.
type TelegramEntity struct {
	Tag      string // b, i, u, s, spoiler, code, pre, a, blockquote, emoji
	Offset   int
	Length   int
	Language string // of a code tag with class="language-…"
}

// TelegramEntityProblem returns what Telegram would change in the
// entities of a parsed text because they break its nesting rules (code
// and pre contain nothing and are inside nothing but a blockquote; links
// are not nested; blockquotes are not nested; no entity is inside one of
// its own kind), or "" when Telegram keeps them all. Telegram does not
// refuse such text: it silently drops or splits entities, so formatting
// is lost.
func TelegramEntityProblem(html string) string {
	_, ents, err := parseTelegramHTML(html)
	if err != nil {
		return err.Error()
	}
	for i, outer := range ents {
		for _, inner := range ents[i+1:] {
			if inner.Offset >= outer.Offset+outer.Length {
				break
			}
			if inner.Offset+inner.Length > outer.Offset+outer.Length {
				continue // not nested (cannot happen with balanced tags)
			}
			switch {
			case inner.Tag == outer.Tag:
				return fmt.Sprintf("%q inside %q", inner.Tag, outer.Tag)
			case outer.Tag == "code" || outer.Tag == "pre":
				return fmt.Sprintf("%q inside %q: code and pre contain no entities", inner.Tag, outer.Tag)
			case (inner.Tag == "code" || inner.Tag == "pre") && outer.Tag != "blockquote":
				return fmt.Sprintf("%q inside %q: code and pre are inside nothing but a blockquote", inner.Tag, outer.Tag)
			case inner.Tag == "blockquote" && outer.Tag == "a":
				return "a blockquote inside a link"
			}
		}
	}
	return ""
}

// parseTelegramHTML returns the visible text and the entities, sorted by
// offset (outer before inner).
func parseTelegramHTML(s string) (string, []TelegramEntity, error) {
	type open struct {
		name   string
		offset int
		lang   string
	}
	var out strings.Builder
	var stack []open
	var ents []TelegramEntity
	units := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", nil, tgErrorf("Unclosed start tag at byte offset %d", i)
			}
			raw := s[i+1 : i+end]
			if strings.HasPrefix(raw, "/") {
				name := strings.TrimSpace(raw[1:])
				if len(stack) == 0 {
					return "", nil, tgErrorf("Unexpected end tag at byte offset %d", i)
				}
				top := stack[len(stack)-1]
				// The end tag's name is compared as written; an empty one
				// closes whatever is open.
				if name != "" && name != top.name {
					return "", nil, tgErrorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top.name, name)
				}
				stack = stack[:len(stack)-1]
				if n := len(ents); top.name == "pre" && n > 0 && ents[n-1].Tag == "code" && ents[n-1].Language != "" &&
					ents[n-1].Offset == top.offset && ents[n-1].Length == units-top.offset {
					// <pre><code class="language-x"> is one entity: a pre
					// with a language.
					ents[n-1].Tag = "pre"
				} else if units > top.offset {
					ents = append(ents, TelegramEntity{Tag: entityOf(top.name), Offset: top.offset, Length: units - top.offset, Language: top.lang})
				}
			} else {
				name, attrs, err := parseTag(raw)
				if err != nil {
					return "", nil, tgErrorf("%v at byte offset %d", err, i)
				}
				if err := checkTag(name, attrs); err != nil {
					return "", nil, err
				}
				lang, _ := strings.CutPrefix(attrs["class"], "language-")
				if name != "code" || !strings.HasPrefix(attrs["class"], "language-") {
					lang = ""
				}
				stack = append(stack, open{name: name, offset: units, lang: lang})
			}
			i += end + 1
		case '&':
			if r, n := decodeEntity(s[i:]); n > 0 {
				out.WriteRune(r)
				units += utf16Units(string(r))
				i += n
			} else {
				out.WriteByte('&')
				units++
				i++
			}
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			out.WriteRune(r)
			units += utf16Units(string(r))
			i += size
		}
	}
	if len(stack) > 0 {
		return "", nil, tgErrorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	// Sort as Telegram does: by offset, longer first, then by the type's
	// priority (a blockquote is outside a pre of the same range).
	slices.SortStableFunc(ents, func(a, b TelegramEntity) int {
		return cmp.Or(cmp.Compare(a.Offset, b.Offset), cmp.Compare(b.Length, a.Length), cmp.Compare(entityPriority(a.Tag), entityPriority(b.Tag)))
	})
	return out.String(), ents, nil
}

// entityPriority orders entities of the same range as Telegram does.
func entityPriority(tag string) int {
	return map[string]int{"blockquote": 0, "pre": 11, "code": 20, "a": 49, "b": 90, "i": 91, "u": 92, "s": 93, "spoiler": 94, "emoji": 99}[tag]
}

// entityOf names the entity a tag makes.
func entityOf(tag string) string {
	switch tag {
	case "strong":
		return "b"
	case "em":
		return "i"
	case "ins":
		return "u"
	case "strike", "del":
		return "s"
	case "span", "tg-spoiler":
		return "spoiler"
	case "tg-emoji":
		return "emoji"
	}
	return tag
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
				return "", nil, tgErrorf("Unclosed start tag")
			}
			val, rest = rest[1:1+end], rest[2+end:]
		} else {
			// A name token: letters, digits, '.' and '-' only.
			end := 0
			for end < len(rest) && (isAlnum(rest[end]) || rest[end] == '.' || rest[end] == '-') {
				end++
			}
			if end < len(rest) && rest[end] != ' ' && rest[end] != '\t' && rest[end] != '\n' {
				return "", nil, tgErrorf("Unexpected end of name token")
			}
			val, rest = strings.ToLower(rest[:end]), rest[end:]
		}
		var dec strings.Builder
		for i := 0; i < len(val); {
			if r, n := decodeEntity(val[i:]); n > 0 {
				dec.WriteRune(r)
				i += n
				continue
			}
			dec.WriteByte(val[i])
			i++
		}
		attrs[key] = dec.String()
	}
	return name, attrs, nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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

// decodeEntity decodes the entity at the start of s as Telegram does:
// &lt; &gt; &amp; &quot; and numeric references, the ';' optional. It
// returns the rune and its length, or 0 when s does not start with one.
//
// platforms/telegram has the same rule for its VisibleLength; the fake
// keeps its own copy on purpose: it is the reference that VisibleLength
// and the Markdown converter are tested against, and a shared copy would
// make their mistakes its own.
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
		for end < len(s) && (s[end] >= '0' && s[end] <= '9' || base == 16 && (s[end] >= 'a' && s[end] <= 'f' || s[end] >= 'A' && s[end] <= 'F')) {
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

// tgParseError is an error worded as the Bot API words it (capitalized).
type tgParseError string

func (e tgParseError) Error() string { return string(e) }

func tgErrorf(format string, args ...any) error {
	return tgParseError(fmt.Sprintf(format, args...))
}
