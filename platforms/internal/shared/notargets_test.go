package shared

import (
	"testing"

	"github.com/heraldpush/herald/push"
)

func TestNoTargets(t *testing.T) {
	n := NoTargets{Bots: "bark", Destination: "the bot's device"}
	if n.Info().Targets {
		t.Error("Info says the platform has targets")
	}
	err := n.ValidateTarget(nil, push.Target{Type: push.TargetUser, Address: "x"})
	want := "bark bots have no targets: the bot's device is the destination"
	if push.KindOf(err) != push.Invalid || push.ReasonOf(err) != "platform_has_no_targets" || err.Error() != want {
		t.Fatalf("ValidateTarget: %v (%s, %s), want invalid platform_has_no_targets %q", err, push.KindOf(err), push.ReasonOf(err), want)
	}
}
