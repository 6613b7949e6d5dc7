package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// catalog is one language's words: every string a page shows comes from
// it by key.
type catalog struct {
	Tag    string // the BCP 47 tag: en, zh-CN
	Code   string // the short code the switch and the cookie use: en, zh
	Name   string // the language's own name, for the switch
	words  map[string]string
	others []*catalog
}

// t returns the key's entry, formatted with args when given. A missing
// key shows itself, so that a test finds it (a test checks that every
// key a template uses is in every catalog).
func (c *catalog) t(key string, args ...any) string {
	s, ok := c.words[key]
	if !ok {
		return key
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

func (c *catalog) has(key string) bool { _, ok := c.words[key]; return ok }

// langCookie remembers the language a person chose.
const langCookie = "herald_lang"

// languages are the console's catalogs, English first (the default).
type languages []*catalog

func newLanguages() languages {
	en := &catalog{Tag: "en", Code: "en", Name: "English", words: englishWords()}
	zh := &catalog{Tag: "zh-CN", Code: "zh", Name: "简体中文", words: chineseWords()}
	en.others, zh.others = []*catalog{zh}, []*catalog{en}
	return languages{en, zh}
}

// byCode finds a catalog by its short code.
func (ls languages) byCode(code string) (*catalog, bool) {
	for _, l := range ls {
		if l.Code == code {
			return l, true
		}
	}
	return nil, false
}

// of chooses a request's language: the remembered switch, else the best
// of Accept-Language, else English.
func (ls languages) of(r *http.Request) *catalog {
	if ck, err := r.Cookie(langCookie); err == nil {
		if l, ok := ls.byCode(ck.Value); ok {
			return l
		}
	}
	best, bestQ := ls[0], 0.0
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		primary, _, _ := strings.Cut(strings.ToLower(tag), "-")
		for _, l := range ls {
			if primary == l.Code && q > bestQ {
				best, bestQ = l, q
			}
		}
	}
	return best
}

// switchLanguage remembers a language for a year and goes back to the
// page it was chosen on.
func (c *Console) switchLanguage(w http.ResponseWriter, r *http.Request) {
	l, ok := c.langs.byCode(r.PathValue("lang"))
	if !ok {
		l = c.langs[0]
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l.Code, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.secure(r)})
	http.Redirect(w, r, localPath(r.URL.Query().Get("next")), http.StatusSeeOther)
}
