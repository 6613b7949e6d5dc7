package transport

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heraldpush/herald/push"
)

// shape is what a request object may hold: the JSON names of its fields,
// taken from a request struct's json tags. A field tagged alias:"x" is the
// other endpoint's spelling of the field x: it is accepted, but messages
// name x.
type shape struct {
	fields map[string]shapeField // by exact JSON name
	lower  map[string]string     // by lower-case name → JSON name
	own    []string              // the names of the endpoint's own fields, in order
}

type shapeField struct {
	alias string // the endpoint's own name of the field, for an alias
	elem  *shape // the shape of an object value, or of the objects of a list value
}

// newShape returns the shape of the struct that v points to.
func newShape(v any) *shape {
	return shapeOfType(reflect.TypeOf(v))
}

func shapeOfType(t reflect.Type) *shape {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	sh := &shape{fields: make(map[string]shapeField), lower: make(map[string]string)}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		sf := shapeField{alias: f.Tag.Get("alias"), elem: shapeOfType(f.Type)}
		sh.fields[name] = sf
		sh.lower[strings.ToLower(name)] = name
		if sf.alias == "" {
			sh.own = append(sh.own, name)
		}
	}
	return sh
}

// fold is the form in which two spellings of one name are equal: lower
// case, without underscores.
func fold(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "_", "")
}

// ownName is the endpoint's own name of the field called name.
func (sh *shape) ownName(name string) string {
	if a := sh.fields[name].alias; a != "" {
		return a
	}
	return name
}

// unknown words the refusal of a field the shape does not hold: a
// spelling that differs from a known one only in case, or the closest
// known name.
func (sh *shape) unknown(path, name string) error {
	where := joinPath(path, name)
	if known, ok := sh.lower[strings.ToLower(name)]; ok {
		return push.Errorf(push.Invalid, "field_name_case", "the field %q differs from %s only in case: field names are case-sensitive; write %s", truncate(where, 60), joinPath(path, known), joinPath(path, known))
	}
	best, dist := "", -1
	for known := range sh.fields {
		d := editDistance(fold(name), fold(known))
		if dist < 0 || d < dist || d == dist && known < best {
			best, dist = known, d
		}
	}
	fields := strings.Join(sh.own, ", ")
	if best != "" && dist <= max(2, len(fold(best))/3) {
		return push.Errorf(push.Invalid, "unknown_field", "the field %q is not known here: did you mean %s? This request's fields are %s", truncate(where, 60), joinPath(path, sh.ownName(best)), fields)
	}
	return push.Errorf(push.Invalid, "unknown_field", "the field %q is not known here: this request's fields are %s", truncate(where, 60), fields)
}

func joinPath(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkStrict walks a body that is valid JSON and refuses what the
// decoder would pass over or alter: a field the shape does not hold (or
// holds in another case), a field given twice in one object, and a string
// that is not valid UTF-8, holds a lone UTF-16 surrogate escape, or holds
// a NUL character.
func checkStrict(data []byte, sh *shape) error {
	c := strictChecker{data: data}
	return c.value(sh, "", "")
}

type strictChecker struct {
	data []byte
	pos  int
}

func (c *strictChecker) skipSpace() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value checks the value at the position. sh is the shape of the objects
// it may hold; path names it in messages.
func (c *strictChecker) value(sh *shape, path, name string) error {
	c.skipSpace()
	if c.pos >= len(c.data) {
		return nil
	}
	switch c.data[c.pos] {
	case '{':
		return c.object(sh, joinPath(path, name))
	case '[':
		return c.array(sh, joinPath(path, name))
	case '"':
		_, err := c.str(joinPath(path, name))
		return err
	default:
		for c.pos < len(c.data) && !strings.ContainsRune(",]} \t\r\n", rune(c.data[c.pos])) {
			c.pos++
		}
		return nil
	}
}

func (c *strictChecker) object(sh *shape, path string) error {
	c.pos++ // {
	var seen []string
	for {
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] == '}' {
			c.pos++
			return nil
		}
		if c.data[c.pos] == ',' {
			c.pos++
			continue
		}
		where := "a field name"
		if path != "" {
			where = "a field name in " + path
		}
		name, err := c.str(where)
		if err != nil {
			return err
		}
		for _, s := range seen {
			if s == name {
				return push.Errorf(push.Invalid, "duplicate_field", "the field %q is given twice: give each field once", truncate(joinPath(path, name), 60))
			}
		}
		seen = append(seen, name)
		var elem *shape
		if sh != nil {
			f, ok := sh.fields[name]
			if !ok {
				return sh.unknown(path, name)
			}
			elem = f.elem
		}
		c.skipSpace()
		c.pos++ // :
		if err := c.value(elem, path, name); err != nil {
			return err
		}
	}
}

func (c *strictChecker) array(elem *shape, path string) error {
	c.pos++ // [
	for i := 0; ; i++ {
		c.skipSpace()
		if c.pos >= len(c.data) || c.data[c.pos] == ']' {
			c.pos++
			return nil
		}
		if c.data[c.pos] == ',' {
			c.pos++
		}
		if err := c.value(elem, path+"["+strconv.Itoa(i)+"]", ""); err != nil {
			return err
		}
	}
}

// str checks the string at the position and returns its value. what
// names it in messages.
func (c *strictChecker) str(what string) (string, error) {
	start := c.pos + 1
	i := start
	plain := true
	for i < len(c.data) && c.data[i] != '"' {
		b := c.data[i]
		switch {
		case b == '\\':
			plain = false
			n, err := c.escape(i, what)
			if err != nil {
				return "", err
			}
			i += n
		case b < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(c.data[i:])
			if r == utf8.RuneError && size <= 1 {
				return "", push.Errorf(push.Invalid, "invalid_text", "%s is not valid UTF-8 (byte 0x%02x at character %d): send text encoded as UTF-8", what, b, utf8.RuneCount(c.data[start:i])+1)
			}
			i += size
		}
	}
	raw := c.data[start:i]
	c.pos = i + 1
	if plain {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(c.data[start-1:i+1], &s); err != nil {
		return "", push.Errorf(push.Invalid, "invalid_json", "%s is not a valid JSON string", what)
	}
	return s, nil
}

// escape checks the escape sequence at i and returns its length: \u0000
// is a NUL character, and a \u escape of a UTF-16 surrogate must be a high
// one followed by a low one.
func (c *strictChecker) escape(i int, what string) (int, error) {
	if i+1 >= len(c.data) || c.data[i+1] != 'u' {
		return 2, nil
	}
	r := c.hex4(i + 2)
	switch {
	case r == 0:
		return 0, push.Errorf(push.Invalid, "invalid_text", "%s holds a NUL character (\\u0000): remove it", what)
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, push.Errorf(push.Invalid, "invalid_text", "%s holds a lone UTF-16 surrogate (\\u%04x): escape a character outside the Basic Multilingual Plane as a surrogate pair, or send it as UTF-8", what, r)
	case r >= 0xD800 && r <= 0xDBFF:
		if i+11 < len(c.data) && c.data[i+6] == '\\' && c.data[i+7] == 'u' {
			if lo := c.hex4(i + 8); lo >= 0xDC00 && lo <= 0xDFFF {
				return 12, nil
			}
		}
		return 0, push.Errorf(push.Invalid, "invalid_text", "%s holds a lone UTF-16 surrogate (\\u%04x): escape a character outside the Basic Multilingual Plane as a surrogate pair, or send it as UTF-8", what, r)
	}
	return 6, nil
}

// hex4 reads the 4 hex digits at i (the body is valid JSON, so they are).
func (c *strictChecker) hex4(i int) rune {
	if i+4 > len(c.data) {
		return -1
	}
	n, err := strconv.ParseUint(string(c.data[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// either returns the value of a field that may be given under two names:
// a and b. Both given with different values is a refusal naming both.
func either[T comparable](a *T, aName string, b *T, bName string) (*T, error) {
	switch {
	case b == nil:
		return a, nil
	case a == nil:
		return b, nil
	case *a != *b:
		return nil, push.Errorf(push.Invalid, "conflicting_fields", "%s and %s are two names of one field and give different values (%s and %s): give one of them", aName, bName, show(*a), show(*b))
	}
	return a, nil
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(truncate(s, 40))
	}
	return fmt.Sprint(v)
}
