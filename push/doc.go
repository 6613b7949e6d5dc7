// Package push is Herald's engine: the domain types and rules of message
// pushing — messages, jobs and their states, idempotency, points, limits and
// API keys — behind the small interfaces Store, Queue, Notifier, RateLimiter,
// Platform and Clock.
//
// Package push imports only the standard library. Storage, queues, platforms
// and the HTTP front are adapters that live in sibling packages and depend
// on push, never the other way round.
//
// An application embeds Herald by building an Engine with New and calling its
// methods:
//
//	eng, err := push.New(push.Options{Store: store, Queue: q, Platforms: platforms})
//	if err != nil { ... }
//	if err := eng.Start(ctx); err != nil { ... }
//	defer eng.Stop(ctx)
//	res, err := eng.Send(ctx, push.SendRequest{AccountID: 1, BotID: 2, TargetID: 3,
//		Message: push.Message{Type: push.MsgTypeText, Content: "hello"}})
package push
