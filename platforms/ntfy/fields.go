package ntfy

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "topic", Label: "Topic", Required: true,
			Help: "The topic to publish to; the phones subscribed to it get the messages. On a public server anyone who knows the name can read it: choose one hard to guess, or protect it."},
		{Name: "server", Label: "Server", Help: "A self-hosted ntfy server's URL; empty for https://ntfy.sh."},
		{Name: "token", Label: "Access token", Secret: true,
			Help: "An access token (tk_…) of a user allowed to publish to a protected topic."},
		{Name: "user", Label: "User", Help: "Instead of a token: the user name of a user allowed to publish."},
		{Name: "password", Label: "Password", Secret: true, Help: "That user's password."},
		{Name: "message_limit", Label: "Message limit (bytes)", Kind: push.ConfigNumber,
			Help: "The server's message-size-limit, when it is not the default 4096: a longer message is refused before it is queued."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://docs.ntfy.sh/publish/" }
