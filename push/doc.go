// Package push is Herald's engine: the domain types and rules of message
// pushing — messages, jobs and their states, idempotency, points, limits,
// accounts and API keys — behind the small interfaces Store, Queue,
// Notifier, RateLimiter, Platform and Clock.
//
// Package push imports only the standard library. Storage, queues,
// platforms and the HTTP front are adapters that live in sibling packages
// and depend on push, never the other way round.
//
// # Shape
//
// The Engine holds the verbs of its own life (New, Start, Drain, Stop)
// and of sending (Send, SendBatch, SendMulti): the hot path every embedder
// calls. Everything else is grouped by resource in a small service reached
// from the engine, one file per resource holding its type, its verbs, its
// filter and its update:
//
//	eng.Accounts()   Create, Get, List, Update
//	eng.Users()      Create, Get, Me, List, Remove, ResetPassword, ChangePassword
//	eng.Sessions()   SignUpMode, SignUp, SignIn, Authenticate, List, SignOut, SignOutEverywhere
//	eng.Invites()    Create, List, Revoke
//	eng.Keys()       Create, Import, Get, List, Revoke, Authenticate, Admit
//	eng.Bots()       Create, Check, Verify, Get, List, Update, UpdateVerified, Delete
//	eng.Targets()    Bind, Get, List, Update, Unbind
//	eng.BindCodes()  Create, Get, List, Revoke
//	eng.Events()     Webhook, Status
//	eng.Jobs()       Get, ByIdempotencyKey, List, Count, Cancel, Resolve
//	eng.Ledger()     List, Grant, SetBalance
//	eng.Audit()      List
//
// Services rather than one type with a verb per resource and action (as
// river's JobGet, JobList, …) because the management of a service run for
// others adds users, sessions, invites, events and an audit trail: a
// hundred methods on Engine would hide its few verbs of sending, and a
// resource's rules are read in one place. Each service is a value inside
// the engine, so reaching it costs nothing.
//
// Every verb of a service takes the acting Principal: an API key's
// account (a member), an operator, or System (herald admin, a program that
// embeds the engine). The engine decides what the principal may see and
// change — another account's bot, target or job is NotFound, as if it did
// not exist; an operator's verb asked by a member is Forbidden — so that no
// front end (the HTTP API, the console, herald admin) holds a rule of its
// own. Lists take a filter with a Limit and a Cursor and return a Page,
// newest first.
//
// Errors are one type, *Error, with a Kind (which the HTTP front maps to a
// status), a stable Reason, and a Message in the engine's words. An error
// about an input names it by its Field; the front ends replace that word
// with their own name of the input (a JSON field, a header).
//
// An application embeds Herald by building an Engine with New and calling
// it:
//
//	eng, err := push.New(push.Options{Store: store, Queue: q, Platforms: platforms})
//	if err != nil { ... }
//	if err := eng.Start(ctx); err != nil { ... }
//	defer eng.Stop(ctx)
//	bot, err := eng.Bots().Create(ctx, push.System(), push.Bot{AccountID: 1, Platform: "ntfy", Name: "alerts", Config: cfg})
//	res, err := eng.Send(ctx, push.AccountPrincipal(1), push.SendRequest{BotID: bot.ID,
//		Message: push.Message{Type: push.MsgTypeText, Content: "hello"}})
package push
