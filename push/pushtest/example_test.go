package pushtest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
)

// ExampleOpen starts a Harness outside a test, as an example or TestMain
// does (a test calls New, which stops it when the test ends), sends
// through its engine and reads what its Platform received.
func ExampleOpen() {
	ctx := context.Background()
	h, err := pushtest.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	f, err := h.Setup(ctx) // Seed, in a test
	if err != nil {
		log.Fatal(err)
	}
	_, err = h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{
		BotID: f.Bot.ID, TargetID: f.Target.ID,
		Message: push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42"},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range h.Platform.Sent() {
		fmt.Println(m.Platform, m.TargetType, m.Address, m.Type, m.Content)
	}
	// Output:
	// pushtest user user-1 markdown **deployed** v42
}

// ExamplePlatform_Fail makes the platform answer as a real one does when
// things go wrong, to check the code under test on each outcome.
func ExamplePlatform_Fail() {
	ctx := context.Background()
	h, err := pushtest.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	f, err := h.Setup(ctx)
	if err != nil {
		log.Fatal(err)
	}
	send := func() push.Job {
		res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{
			BotID: f.Bot.ID, TargetID: f.Target.ID, Message: push.Message{Content: "disk full"},
		})
		if err != nil {
			log.Fatal(err)
		}
		return res.Jobs[0]
	}

	// Busy twice: the engine tries again, and the third attempt delivers.
	h.Platform.Fail(2, push.RetryableError(0, errors.New("busy")))
	j := send()
	fmt.Println(j.State, "after", j.Attempts, "attempts")

	// The bot was blocked: the job fails, nothing was received.
	h.Platform.Fail(1, push.DefinitiveError("403", "the bot was blocked by the user"))
	fmt.Println(send().State)

	// The answer was lost: the message was received, but the engine cannot
	// know it.
	h.Platform.Fail(1, push.UncertainError(errors.New("connection reset")))
	fmt.Println(send().State)

	fmt.Println("received:", len(h.Platform.Sent()))
	// Output:
	// succeeded after 3 attempts
	// failed
	// uncertain
	// received: 2
}

// ExampleWithPlatformNames registers the Platform under the names the
// code under test makes its bots on, and sets engine options: here,
// points are charged, one a message.
func ExampleWithPlatformNames() {
	ctx := context.Background()
	h, err := pushtest.Open(ctx,
		pushtest.WithPlatformNames("telegram", "slack"),
		pushtest.WithEngineOptions(func(o *push.Options) { o.Points.Enabled = true }),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	f, err := h.Setup(ctx) // the bot is on the first name
	if err != nil {
		log.Fatal(err)
	}
	res, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{
		BotID: f.Bot.ID, TargetID: f.Target.ID, Message: push.Message{Content: "hello"},
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err := h.Engine.Accounts().Get(ctx, push.System(), f.Account.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Engine.PlatformNames(), f.Bot.Platform, res.Jobs[0].State)
	fmt.Println("cost", res.Jobs[0].Cost, "points left", a.Points)
	// Output:
	// [slack telegram] telegram succeeded
	// cost 1 points left 99
}
