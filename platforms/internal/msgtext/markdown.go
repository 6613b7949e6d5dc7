package msgtext

import (
	"strings"

	"github.com/heraldpush/herald/push"
)

// Markdown is a message as Markdown, for a service that renders every
// message as Markdown: Markdown as written, text escaped so that it shows
// as written, an image as ImageMarkdown.
func Markdown(m push.Message) string {
	switch m.Type {
	case push.MsgTypeMarkdown:
		return m.Content
	case push.MsgTypeImage:
		return ImageMarkdown(m)
	default:
		return EscapeMarkdown(m.Content)
	}
}

// ImageMarkdown is an image message as Markdown: its text escaped, when
// it has any, then the image, named by its caption.
func ImageMarkdown(m push.Message) string {
	img := MarkdownImage(m.ImageURL, Caption(m))
	if strings.TrimSpace(m.Content) == "" {
		return img
	}
	return EscapeMarkdown(m.Content) + "\n\n" + img
}
