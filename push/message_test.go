package push

import (
	"strings"
	"testing"
)

func TestMessageValidate(t *testing.T) {
	l := DefaultLimits()
	tests := []struct {
		name   string
		m      Message
		reason string // empty: valid
	}{
		{"text", Message{Type: MsgTypeText, Content: "hi"}, ""},
		{"markdown", Message{Type: MsgTypeMarkdown, Content: "**hi**"}, ""},
		{"image", Message{Type: MsgTypeImage, ImageURL: "https://e.com/a.png"}, ""},
		{"image with caption", Message{Type: MsgTypeImage, ImageURL: "http://e.com/a.png", Content: "cap"}, ""},
		{"url makes an image", Message{Type: MsgTypeText, ImageURL: "https://e.com/a.png"}, ""},
		{"2000 code points of CJK", Message{Type: MsgTypeText, Content: strings.Repeat("字", 2000)}, ""},
		{"2000 emoji", Message{Type: MsgTypeText, Content: strings.Repeat("😀", 2000)}, ""},
		{"unknown type", Message{Type: 3, Content: "x"}, "invalid_msg_type"},
		{"negative type", Message{Type: -1, Content: "x"}, "invalid_msg_type"},
		{"empty", Message{Type: MsgTypeText}, "empty_message"},
		{"blank", Message{Type: MsgTypeMarkdown, Content: " \n\t"}, "empty_message"},
		{"image without url", Message{Type: MsgTypeImage, Content: "x"}, "missing_image_url"},
		{"relative url", Message{Type: MsgTypeImage, ImageURL: "/a.png"}, "invalid_image_url"},
		{"ftp url", Message{Type: MsgTypeImage, ImageURL: "ftp://e.com/a.png"}, "invalid_image_url"},
		{"javascript url", Message{Type: MsgTypeImage, ImageURL: "javascript:alert(1)"}, "invalid_image_url"},
		{"long url", Message{Type: MsgTypeImage, ImageURL: "https://e.com/" + strings.Repeat("a", 2048)}, "invalid_image_url"},
		{"2001 code points", Message{Type: MsgTypeText, Content: strings.Repeat("字", 2001)}, "content_too_long"},
		{"invalid utf-8", Message{Type: MsgTypeText, Content: "a\xffb"}, "invalid_content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.normalize().validate(l)
			switch {
			case tt.reason == "" && err != nil:
				t.Fatalf("validate = %v, want nil", err)
			case tt.reason != "" && (err == nil || ReasonOf(err) != tt.reason || KindOf(err) != Invalid):
				t.Fatalf("validate = %v (reason %q), want Invalid %q", err, ReasonOf(err), tt.reason)
			}
		})
	}
}
