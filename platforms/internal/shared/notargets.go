package shared

import (
	"encoding/json"

	"github.com/heraldpush/herald/push"
)

// NoTargets is the part of push.Platform that every platform without
// targets shares: the bot's config names its one destination. A provider
// embeds it.
type NoTargets struct {
	// Bots names the platform's bots in the refusal ("bark").
	Bots string
	// Destination is what a bot sends to ("the bot's device").
	Destination string
}

// Info implements push.Platform: the platform has no targets.
func (n NoTargets) Info() push.PlatformInfo { return push.PlatformInfo{Targets: false} }

// ValidateTarget implements push.Platform; the engine never binds targets
// to a platform without targets.
func (n NoTargets) ValidateTarget(json.RawMessage, push.Target) error {
	return push.Errorf(push.Invalid, "platform_has_no_targets", "%s bots have no targets: %s is the destination", n.Bots, n.Destination)
}
