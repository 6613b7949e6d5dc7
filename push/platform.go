package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Platform turns a message into a chat platform's real API calls.
type Platform interface {
	// Info describes what the platform can address.
	Info() PlatformInfo
	// ValidateConfig checks a bot's configuration (credentials, base URLs)
	// when the bot is created. Its error names the field that is wrong and
	// never contains a credential.
	ValidateConfig(config json.RawMessage) error
	// ValidateTarget checks a target when it is bound to a bot.
	ValidateTarget(config json.RawMessage, t Target) error
	// ValidateMessage checks, before anything is queued or charged, that
	// the platform can send m to a target of type tt (empty when the
	// platform has no targets).
	ValidateMessage(m Message, tt TargetType) error
	// Send delivers one message. Its error is a *SendError that says
	// whether the platform may have received the message; any other error
	// is treated as Uncertain.
	Send(ctx context.Context, d Delivery) (Receipt, error)
}

// BotMessageValidator is implemented by platforms whose limits depend on
// the bot's configuration (a self-hosted server's message size limit, a
// webhook's flavor, a robot's required keywords). The engine calls it after
// ValidateMessage, before anything is queued or charged; its error is a
// refusal of the request (400).
type BotMessageValidator interface {
	ValidateBotMessage(config json.RawMessage, m Message, tt TargetType) error
}

// Verifier is implemented by platforms that can check a bot's credentials
// with the platform's cheapest authenticated call (Telegram's getMe, a
// token fetch, a dry check). The engine calls it before it saves new
// credentials, when asked to. Its error is a *SendError: Definitive when
// the platform refused the credentials, Retryable or Uncertain when it
// could not be asked. A platform that can verify some configs only (a
// WeCom robot webhook has no authenticated call that sends nothing)
// returns ErrCannotVerify for the others: the engine then reports the
// credentials as not verified, without refusing them.
type Verifier interface {
	Verify(ctx context.Context, config json.RawMessage) error
}

// ErrCannotVerify is what a Verifier returns for a config whose
// credentials the platform has no way to check without sending.
var ErrCannotVerify = errors.New("the platform cannot verify these credentials without sending")

// PlatformInfo describes a platform.
type PlatformInfo struct {
	// Targets is false for platforms whose bot has one destination (push
	// relays, workplace webhooks): sends to them name no target.
	Targets bool
	// TargetTypes lists the target types the platform can bind.
	TargetTypes []TargetType
}

// Delivery is one job handed to a platform.
type Delivery struct {
	JobID   string
	Bot     Bot
	Target  Target // zero when the platform has no targets
	AsType  TargetType
	Message Message
	Attempt int // 1 for the first attempt of this job
	// Reply is the message (or event) this send answers, on a platform
	// that takes replies only (ReplyRules); nil elsewhere.
	Reply *ReplyTo
}

// Receipt is what the platform answered for a delivered message.
type Receipt struct {
	// PlatformIndex is the platform's id of the message, when it gives one.
	PlatformIndex string
}

// Outcome classifies a failed platform call.
type Outcome uint8

// Outcomes of a failed send.
const (
	// OutcomeUncertain: the platform may have processed the message (timeout after
	// the request was written, connection reset while reading the answer,
	// a gateway 5xx, an unreadable 2xx). The job becomes uncertain and is
	// never sent again automatically.
	OutcomeUncertain Outcome = iota
	// OutcomeDefinitive: the platform processed the request and refused it; sending
	// it again would fail again. The job fails.
	OutcomeDefinitive
	// OutcomeRetryable: nothing was sent (connection refused, DNS failure, a rate
	// limit with a wait, "system busy", an expired token). The job may be
	// tried again within its send window.
	OutcomeRetryable
)

// String names the outcome.
func (o Outcome) String() string {
	switch o {
	case OutcomeDefinitive:
		return "definitive"
	case OutcomeRetryable:
		return "retryable"
	default:
		return "uncertain"
	}
}

// SendError is a platform call that did not deliver.
type SendError struct {
	Outcome    Outcome
	Code       string        // the platform's error code, if any
	Message    string        // the platform's text or a description of the failure
	RetryAfter time.Duration // for Retryable: the platform's wait hint
	Err        error         // the underlying error, if any
}

// Error implements the error interface.
func (e *SendError) Error() string {
	msg := e.detail()
	if e.Code != "" {
		return fmt.Sprintf("%s (code %s)", msg, e.Code)
	}
	return msg
}

// detail is the error without its code.
func (e *SendError) detail() string {
	if e.Message == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the underlying error.
func (e *SendError) Unwrap() error { return e.Err }

// DefinitiveError returns a SendError for a refusal by the platform.
func DefinitiveError(code, format string, args ...any) *SendError {
	return &SendError{Outcome: OutcomeDefinitive, Code: code, Message: fmt.Sprintf(format, args...)}
}

// RetryableError returns a SendError for a failure that sent nothing.
func RetryableError(after time.Duration, err error) *SendError {
	return &SendError{Outcome: OutcomeRetryable, RetryAfter: after, Message: err.Error(), Err: err}
}

// UncertainError returns a SendError for a failure after which the message
// may have been delivered.
func UncertainError(err error) *SendError {
	return &SendError{Outcome: OutcomeUncertain, Message: err.Error(), Err: err}
}

// AsSendError classifies any error from Platform.Send: a *SendError keeps
// its outcome; anything else is Uncertain, because nothing proves the
// message was not delivered.
func AsSendError(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return &SendError{Outcome: OutcomeUncertain, Message: err.Error(), Err: err}
}

// PlatformNames lists the platforms this engine can send on.
func (e *Engine) PlatformNames() []string {
	names := make([]string, 0, len(e.platforms))
	for n := range e.platforms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Platform returns a platform by name.
func (e *Engine) Platform(name string) (Platform, bool) {
	p, ok := e.platforms[name]
	return p, ok
}

// ConfigField describes one field of a platform's bot configuration, so
// that a front end (the console) can build a form for it.
type ConfigField struct {
	// Name is the field's name in the config's JSON object.
	Name string
	// Label and Help say in English what the field is and where to find
	// its value; a front end may translate them by Name.
	Label string
	Help  string
	// Secret marks a credential: a front end never shows it back, and a
	// form for new credentials starts empty.
	Secret bool
	// Required fields must be given; the others may be left empty.
	Required bool
	// Choices, when set, are the only values the field takes (empty is
	// allowed when the field is not Required).
	Choices []string
	// Kind is the JSON type of the field's value: text (a string) unless
	// it says otherwise.
	Kind ConfigKind
}

// ConfigKind is the JSON type of a config field's value.
type ConfigKind string

// The kinds of config fields.
const (
	ConfigText   ConfigKind = ""       // a string
	ConfigNumber ConfigKind = "number" // an integer
	ConfigBool   ConfigKind = "bool"   // true or false
	ConfigList   ConfigKind = "list"   // an array of strings
)

// ConfigDescriber is implemented by platforms that describe their bots'
// configuration field by field, with a link to their setup guide.
type ConfigDescriber interface {
	ConfigFields() []ConfigField
	SetupGuide() string
}
