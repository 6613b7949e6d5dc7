package push

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MsgType is the kind of a message, numbered as in the HTTP contract.
type MsgType int

// Message types.
const (
	MsgTypeText     MsgType = 0
	MsgTypeMarkdown MsgType = 2
	MsgTypeImage    MsgType = 7
)

// Valid reports whether t is one of the known message types.
func (t MsgType) Valid() bool { return t == MsgTypeText || t == MsgTypeMarkdown || t == MsgTypeImage }

// String names the message type.
func (t MsgType) String() string {
	switch t {
	case MsgTypeText:
		return "text"
	case MsgTypeMarkdown:
		return "markdown"
	case MsgTypeImage:
		return "image"
	}
	return "unknown"
}

// Message is what is sent. For an image, Content is an optional caption.
type Message struct {
	Type     MsgType
	Content  string
	ImageURL string
	Wakeup   bool // send in wake-up mode where the platform has one
}

// maxImageURL bounds the length of an image URL in bytes.
const maxImageURL = 2048

// normalize applies the contract's rules that are not refusals: an image
// URL makes the message an image, and an image message without an image
// URL whose content is an http or https URL (as older clients send) sends
// that URL as the image, without a caption.
func (m Message) normalize() Message {
	if m.ImageURL != "" {
		m.Type = MsgTypeImage
	}
	if m.Type == MsgTypeImage && m.ImageURL == "" {
		if u := strings.TrimSpace(m.Content); isHTTPURL(u) {
			m.ImageURL, m.Content = u, ""
		}
	}
	return m
}

// isHTTPURL reports whether s is one absolute http or https URL (no
// spaces: a URL followed by words is a caption, not a URL).
func isHTTPURL(s string) bool {
	if s == "" || strings.ContainsFunc(s, unicode.IsSpace) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) && u.Host != ""
}

// validate checks m against the limits. It expects a normalized message.
func (m Message) validate(l Limits) error {
	if !m.Type.Valid() {
		return fieldErrorf(FieldMsgType, "invalid_msg_type", "message type %d is not supported: use 0 (text), 2 (Markdown) or 7 (image)", int(m.Type)).with(strconv.Itoa(int(m.Type)), 0)
	}
	if m.Type == MsgTypeImage {
		if m.ImageURL == "" {
			return fieldErrorf(FieldImageURL, "missing_image_url", "an image message (type 7) needs an image URL: give the URL of the image to send as the image URL (or as the whole content)")
		}
		if err := validateImageURL(m.ImageURL); err != nil {
			return err
		}
	} else if strings.TrimSpace(m.Content) == "" {
		return fieldErrorf(FieldContent, "empty_message", "the message is empty: give content, or an image URL for an image")
	}
	if !utf8.ValidString(m.Content) {
		return fieldErrorf(FieldContent, "invalid_content", "content is not valid UTF-8")
	}
	if strings.ContainsRune(m.Content, 0) {
		return fieldErrorf(FieldContent, "invalid_content", "content holds a NUL character: remove it")
	}
	if n := utf8.RuneCountInString(m.Content); n > l.MaxContent {
		return fieldErrorf(FieldContent, "content_too_long", "content is %d characters long; the limit is %d: shorten it or split it into several messages", n, l.MaxContent).with(strconv.Itoa(n), int64(l.MaxContent))
	}
	return nil
}

func validateImageURL(raw string) error {
	if len(raw) > maxImageURL {
		return fieldErrorf(FieldImageURL, "invalid_image_url", "the image URL is %d bytes long; the limit is %d", len(raw), maxImageURL).with(strconv.Itoa(len(raw)), maxImageURL)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldErrorf(FieldImageURL, "invalid_image_url", "the image URL %q is not an absolute http or https URL", truncate(raw, 80)).with(truncate(raw, 80), 0)
	}
	return nil
}

// truncate shortens s to at most n runes for quoting in messages.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
