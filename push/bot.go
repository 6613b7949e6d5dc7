package push

import (
	"encoding/json"
	"time"
)

// Bot sends messages on one platform on behalf of an account. Config holds
// the platform credentials and options as JSON; it is validated by the
// platform and never returned by any API.
type Bot struct {
	ID        int64
	AccountID int64
	Platform  string
	Name      string
	Config    json.RawMessage
	CreatedAt time.Time
}

// TargetType says whether a target is a person or a group chat.
type TargetType string

// Target types.
const (
	TargetUser  TargetType = "user"
	TargetGroup TargetType = "group"
)

// Valid reports whether t is a known target type.
func (t TargetType) Valid() bool { return t == TargetUser || t == TargetGroup }

// Target is a destination bound under a bot. Its ID is Herald's; Address is
// the platform's identifier (a chat id, an open id, …).
type Target struct {
	ID        int64
	BotID     int64
	Type      TargetType
	Address   string
	Name      string
	CreatedAt time.Time
}
