package push

import (
	"context"
	"encoding/json"
	"time"
)

// Inbound events: platforms with targets also speak to Herald. A user
// writes to a bot, adds it to a group, blocks it. A platform that can
// hear its bots implements EventSource; the engine runs one receiver per
// bot across all nodes (or answers the platform's webhook), and turns the
// events into three things only: bindings (an invite code arrived from a
// chat), reply context (the latest message a target wrote, which a
// platform that takes replies only needs), and presence (a target that is
// gone, or back).

// EventKind names what an inbound event says.
type EventKind string

// Event kinds.
const (
	// EventMessage: a user or a group wrote to the bot.
	EventMessage EventKind = "message"
	// EventJoined: the user followed, unblocked or added the bot, or let it
	// message them again; the bot was added to the group.
	EventJoined EventKind = "joined"
	// EventLeft: the user blocked, unfollowed or deleted the bot, or
	// stopped its messages; the bot was removed from the group.
	EventLeft EventKind = "left"
	// EventMoved: the chat has a new address (a group upgraded).
	EventMoved EventKind = "moved"
)

// Event is one inbound event of a bot, as a receiver decoded it.
type Event struct {
	// ID is the platform's id of the event, unique per bot: the engine
	// handles an event once, however often it is delivered.
	ID   string
	Kind EventKind
	// Type and Address are the chat's: a user or a group, and the
	// platform's id of it (what a target of the chat binds).
	Type    TargetType
	Address string
	// Name is the chat's display name, for a target bound from it.
	Name string
	// Text is a message's text, with the mention of the bot removed.
	Text string
	// MessageID is a message's id, for replies to it.
	MessageID string
	// ReplyID is the id of an event the platform takes replies to (a
	// follow, an add to a group), where it differs from ID.
	ReplyID string
	// NewAddress is the chat's new address, for EventMoved.
	NewAddress string
	At         time.Time
}

// EventReply is what the engine answers an event with: a text to send
// back to the chat (at once, in the platform's passive reply where it has
// one), or nothing.
type EventReply struct {
	Text string
	// Reply is, on a platform that takes replies only (ReplyRules), the
	// reply the text is sent as when the chat is a bound target: claimed
	// like a push's, so that later pushes take the next ones. Zero
	// elsewhere: the platform answers the event's own message first.
	Reply ReplyTo
}

// EventSink is where a receiver reports what its bot hears. The engine
// implements it; a receiver calls it in the order the events came.
type EventSink interface {
	// Handle handles one event: once, however often it is reported (a
	// repeat answers an empty reply).
	Handle(ctx context.Context, ev Event) (EventReply, error)
	// SaveCursor remembers where the receiver is in the platform's stream
	// (an update offset, a gateway session), for whichever node runs the
	// bot's receiver next.
	SaveCursor(ctx context.Context, cursor string) error
}

// ReceiveMode is how a bot hears its users.
type ReceiveMode string

// Receive modes.
const (
	ReceiveNone     ReceiveMode = ""         // the bot does not listen
	ReceiveOutbound ReceiveMode = "outbound" // the engine runs Receive: long polling, a gateway WebSocket; no public address needed
	ReceiveWebhook  ReceiveMode = "webhook"  // the platform calls the bot's webhook (/api/hooks/{bot}): a public address is needed
)

// WebhookRequest is a request of a platform to a bot's webhook, as the
// HTTP front read it (its body capped).
type WebhookRequest struct {
	Method string
	Query  map[string][]string
	Header map[string][]string
	Body   []byte
}

// HeaderValue returns the first value of a request header (canonical
// name).
func (r WebhookRequest) HeaderValue(name string) string {
	if v := r.Header[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// QueryValue returns the first value of a query parameter.
func (r WebhookRequest) QueryValue(name string) string {
	if v := r.Query[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// WebhookResponse is the answer to a platform's webhook request.
type WebhookResponse struct {
	Status      int
	ContentType string
	Body        []byte
}

// EventSource is implemented by platforms whose bots hear their users.
type EventSource interface {
	// ReceiveMode says how a bot with config receives.
	ReceiveMode(config json.RawMessage) ReceiveMode
	// Receive runs the outbound receiver of a bot until ctx ends or it
	// fails, from cursor (the last one saved; "" at first), reporting
	// events to sink in order and saving its cursor once it handled them.
	// The engine retries a failure later, with growing waits.
	Receive(ctx context.Context, bot Bot, cursor string, sink EventSink) error
	// Webhook handles a request of the platform to the bot's webhook: it
	// verifies the request (signature, secret, time window) before
	// parsing anything, answers the platform's handshakes, and reports
	// events to sink, putting the reply in its answer where the platform
	// takes one. A request that does not verify is answered as a bad
	// signature, and reports nothing.
	Webhook(ctx context.Context, bot Bot, req WebhookRequest, sink EventSink) WebhookResponse
}

// WebhookSetter is implemented by platforms whose webhook is registered
// through their API (Telegram's setWebhook). The node that runs a bot's
// receiver sets it to the bot's webhook URL in webhook mode, and removes
// it ("") in outbound mode.
type WebhookSetter interface {
	SetWebhook(ctx context.Context, bot Bot, url string) error
}

// BindLink is what a person uses to send a bind code to a bot besides
// typing it: a link that opens the chat with the code, or a QR code to
// scan.
type BindLink struct {
	URL   string // e.g. https://t.me/<bot>?start=<code>
	QRURL string // the platform's image of a QR code that binds on scan
}

// BindLinker is implemented by platforms that make a link (or a QR code)
// for a bind code of the chats tt, which lasts ttl (a link that outlives
// it binds nothing).
type BindLinker interface {
	BindLink(ctx context.Context, bot Bot, code string, tt TargetType, ttl time.Duration) (BindLink, error)
}

// ReplyRules is implemented by platforms that take messages to a target
// only as replies to what it sent (QQ since 2025): a reply to a message
// within MessageWindow, at most PerMessage per message, or to an event
// (a follow, an add) within EventWindow.
type ReplyRules interface {
	ReplyRules(tt TargetType) ReplyRule
}

// ReplyRule is a platform's window for replies to one kind of target.
type ReplyRule struct {
	MessageWindow time.Duration
	EventWindow   time.Duration
	PerMessage    int
}

// ReplyTo is what a send that must be a reply answers: the message (or
// event) and the reply's place among the replies to it (1 for the first).
type ReplyTo struct {
	MessageID string
	EventID   string
	Seq       int
}
