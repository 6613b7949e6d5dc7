package feishu_test

import (
	"context"
	"testing"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

var ctx = context.Background()

// env is a Herald with a fake Feishu and an image host.
type env struct {
	*testkit.PlatformEnv
	fs *fake.Feishu
}

func newEnv(t *testing.T, opts ...testkit.Option) *env {
	t.Helper()
	return &env{PlatformEnv: testkit.NewPlatformEnv(t, "feishu", opts...), fs: fake.NewFeishu(t)}
}

func text(s string) push.Message     { return push.Message{Type: push.MsgTypeText, Content: s} }
func markdown(s string) push.Message { return push.Message{Type: push.MsgTypeMarkdown, Content: s} }
func image(u, caption string) push.Message {
	return push.Message{Type: push.MsgTypeImage, ImageURL: u, Content: caption}
}
