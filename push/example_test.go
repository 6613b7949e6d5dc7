package push_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/push/pushtest"
	"github.com/heraldpush/herald/queue"
	"github.com/heraldpush/herald/storage"
)

// Example embeds the engine and sends one message: a store (SQLite, here
// in memory), the in-process queue and the platforms are given to New;
// Start starts the workers. The platform here is a pushtest.Platform,
// which records what it receives; a program gives builtin.Platforms (see
// package platforms/builtin) or platforms of its own.
func Example() {
	ctx := context.Background()
	store, err := storage.Open(ctx, ":memory:") // a file path keeps the data
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	pager := pushtest.NewPlatform()
	eng, err := push.New(push.Options{
		Store:     store,
		Queue:     queue.NewMemory(queue.MemoryOptions{Workers: 2}),
		Platforms: map[string]push.Platform{"pager": pager},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer eng.Stop(ctx)

	// The program acts as the system principal to set up; a send is made
	// for one account.
	sys := push.System()
	acct, err := eng.Accounts().Create(ctx, sys, "acme")
	if err != nil {
		log.Fatal(err)
	}
	bot, err := eng.Bots().Create(ctx, sys, push.Bot{AccountID: acct.ID, Platform: "pager", Name: "alerts"})
	if err != nil {
		log.Fatal(err)
	}
	target, err := eng.Targets().Bind(ctx, sys, push.Target{BotID: bot.ID, Type: push.TargetUser, Address: "on-call"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := eng.Send(ctx, push.AccountPrincipal(acct.ID), push.SendRequest{
		BotID: bot.ID, TargetID: target.ID,
		Message: push.Message{Type: push.MsgTypeMarkdown, Content: "**deployed** v42"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("job:", res.Jobs[0].State)
	fmt.Println("received:", pager.Sent()[0].Address, pager.Sent()[0].Content)
	// Output:
	// job: succeeded
	// received: on-call **deployed** v42
}

// ExampleEngine_Send_idempotent resubmits a send, as a program does when
// it does not know whether its first call went through (it crashed, or
// the call timed out): with the same idempotency key, the engine answers
// with the first call's job and sends nothing again.
func ExampleEngine_Send_idempotent() {
	ctx := context.Background()
	h, err := pushtest.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	f, err := h.Setup(ctx) // an account, a bot and a user target
	if err != nil {
		log.Fatal(err)
	}
	acct, bot, target := f.Account, f.Bot, f.Target

	req := push.SendRequest{
		BotID: bot.ID, TargetID: target.ID,
		Message:        push.Message{Content: "backup finished"},
		IdempotencyKey: "backup-2026-11-25", // one key per logical send
	}
	first, err := h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), req)
	if err != nil {
		log.Fatal(err)
	}
	again, err := h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same job:", again.Jobs[0].ID == first.Jobs[0].ID, "replayed:", again.Replayed)
	fmt.Println("messages received:", len(h.Platform.Sent()))

	// The same key with another message is refused: a key names one send.
	req.Message.Content = "backup failed"
	_, err = h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), req)
	fmt.Println("another message:", push.KindOf(err), push.ReasonOf(err))
	// Output:
	// same job: true replayed: true
	// messages received: 1
	// another message: conflict idempotency_conflict
}

// ExampleResult reads what a send came to. An error means the request
// was refused: nothing was queued, charged or sent, and the error's Kind
// and Reason say why. Otherwise each job's State tells the outcome: a
// pending job is still being sent (Jobs().Get, later, tells how it
// ended), an uncertain one may or may not have arrived (its platform's
// answer was lost), and a failed one was not delivered.
func ExampleResult() {
	ctx := context.Background()
	h, err := pushtest.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	f, err := h.Setup(ctx) // an account, a bot and a user target
	if err != nil {
		log.Fatal(err)
	}
	acct, bot, target := f.Account, f.Bot, f.Target

	send := func(targetID int64) {
		res, err := h.Engine.Send(ctx, push.AccountPrincipal(acct.ID), push.SendRequest{
			BotID: bot.ID, TargetID: targetID, Message: push.Message{Content: "disk full"},
		})
		if err != nil {
			fmt.Println("refused:", push.KindOf(err), push.ReasonOf(err))
			return
		}
		for _, j := range res.Jobs {
			switch {
			case j.State.Pending():
				fmt.Println("pending: ask again later with Jobs().Get", j.ID)
			case j.State == push.StateSucceeded:
				fmt.Println("delivered")
			case j.State == push.StateUncertain:
				fmt.Println("uncertain:", j.Error)
			default:
				fmt.Println(j.State, j.Error)
			}
		}
	}
	send(target.ID + 1) // a target that does not exist
	send(target.ID)
	h.Platform.Fail(1, push.UncertainError(errors.New("connection reset")))
	send(target.ID)
	h.Platform.Fail(1, push.DefinitiveError("403", "the bot was blocked by the user"))
	send(target.ID)
	// Output:
	// refused: not_found target_not_found
	// delivered
	// uncertain: pushtest: connection reset; the platform may have received the message: check it, then resolve the job
	// failed pushtest: the bot was blocked by the user (code 403)
}
