package msgtext

import (
	"testing"

	"github.com/heraldpush/herald/push"
)

func TestMarkdown(t *testing.T) {
	img := "https://img.example.com/c (1).png"
	tests := []struct {
		msg  push.Message
		want string
	}{
		{push.Message{Content: "disk *full*\n# not a heading"}, "disk \\*full\\*  \n\\# not a heading"},
		{push.Message{Type: push.MsgTypeMarkdown, Content: "## **Deployed**"}, "## **Deployed**"},
		{push.Message{Type: push.MsgTypeImage, Content: "CPU [prod]", ImageURL: img}, "CPU \\[prod\\]\n\n![CPU \\[prod\\]](https://img.example.com/c%20%281%29.png)"},
		{push.Message{Type: push.MsgTypeImage, Content: " ", ImageURL: img}, "![c (1).png](https://img.example.com/c%20%281%29.png)"},
	}
	for _, tt := range tests {
		if got := Markdown(tt.msg); got != tt.want {
			t.Errorf("Markdown(%s %q) = %q, want %q", tt.msg.Type, tt.msg.Content, got, tt.want)
		}
	}
}
