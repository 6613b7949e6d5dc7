package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// Send one message and act on each outcome. An answer lost on the way is
// recovered by the send's key, never sent again under a new one.
func ExampleClient_Send() {
	srv := startExampleServer() // a Herald with an account, its key, bot 1 and target 1
	defer srv.stop()

	c, err := client.New(srv.url, client.Options{APIKey: srv.key}) // e.g. https://push.example.com/api
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	res, err := c.Send(ctx, client.Message{
		BotID: srv.bot, TargetID: srv.target,
		Content: "**deployed** v42", Type: client.Markdown,
		Key: "deploy-42", // optional: without it, Send makes one
	})
	if errors.Is(err, client.ErrUnknownResult) {
		res, err = c.Recover(ctx, client.KeyOf(err)) // what became of it?
	}
	if err != nil {
		log.Fatal(err) // refused (a *client.Error), or the server was not reached
	}
	switch res.Outcome {
	case client.Delivered:
		fmt.Println("delivered")
	case client.Pending:
		fmt.Println("still sending: wait for job", res.JobID)
	case client.Uncertain:
		fmt.Println("may have arrived: check the chat, do not resend")
	case client.Failed:
		fmt.Println("not delivered:", res.Detail)
	}
	// Output: delivered
}

// Wait for a message the server was still sending when it answered (202,
// pending after the synchronous wait).
func ExampleClient_Wait() {
	srv := startExampleServer(testkit.WithLimits(push.Limits{SyncWait: 50 * time.Millisecond}))
	defer srv.stop()
	srv.herald.Telegram.SetDelay(300 * time.Millisecond) // a slow platform

	c, err := client.New(srv.url, client.Options{APIKey: srv.key})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res, err := c.Send(ctx, client.Message{BotID: srv.bot, TargetID: srv.target, Content: "nightly report"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Outcome)
	if res.Outcome == client.Pending {
		job, err := c.Wait(ctx, res.JobID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(job.Outcome, job.State)
	}
	// Output:
	// pending
	// delivered succeeded
}

// Find out what became of a send by its Idempotency-Key, after its answer
// was lost: a process that stores the key before sending can ask after a
// crash too. A key the server never saw may be sent with.
func ExampleClient_Recover() {
	srv := startExampleServer()
	defer srv.stop()
	c, err := client.New(srv.url, client.Options{APIKey: srv.key})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	m := client.Message{BotID: srv.bot, TargetID: srv.target, Content: "invoice 7 is paid", Key: "invoice-7"}
	if _, err := c.Send(ctx, m); err != nil {
		log.Fatal(err)
	}

	for _, key := range []string{"invoice-7", "invoice-8"} {
		res, err := c.Recover(ctx, key)
		switch {
		case errors.Is(err, client.ErrNotSent):
			fmt.Println(key, "was never sent")
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println(key, res.Outcome)
		}
	}
	// Output:
	// invoice-7 delivered
	// invoice-8 was never sent
}

// Tell refusals apart by the API's reason.
func ExampleError() {
	srv := startExampleServer()
	defer srv.stop()
	c, err := client.New(srv.url, client.Options{APIKey: srv.key})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	res, err := c.Send(context.Background(), client.Message{BotID: 99, TargetID: 1, Content: "hello"})
	var herr *client.Error
	switch {
	case errors.Is(err, client.ReasonBotNotFound):
		fmt.Println(res.Outcome, "bot 99: not in this account")
	case errors.As(err, &herr):
		fmt.Println(res.Outcome, herr.Status, herr.Reason)
	}
	// Output: refused bot 99: not in this account
}

// Read every item of a batch: a batch has no single outcome.
func ExampleClient_SendBatch() {
	srv := startExampleServer()
	defer srv.stop()
	c, err := client.New(srv.url, client.Options{APIKey: srv.key})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	b, err := c.SendBatch(context.Background(), client.Batch{BotID: srv.bot, TargetIDs: []int64{srv.target}, Content: "maintenance at 22:00"})
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range b.Items {
		fmt.Println("target", it.TargetID, it.Outcome)
	}
	fmt.Println(b.Count(client.Delivered), "of", len(b.Items), "delivered")
	// Output:
	// target 1 delivered
	// 1 of 1 delivered
}
