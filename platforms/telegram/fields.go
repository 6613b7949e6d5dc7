package telegram

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "token", Label: "Bot token", Required: true, Secret: true,
			Help: "The token @BotFather gave when you made the bot (/newbot), such as 123456789:AA…"},
		{Name: "receive", Label: "Hear users", Choices: []string{receivePoll, receiveWebhook},
			Help: "How the bot hears its users, for binding chats by invite: poll (no public address needed) or webhook (needs the server's public URL). Empty: it does not listen."},
		{Name: "api_base", Label: "Bot API server",
			Help: "A self-hosted Bot API server's URL; empty for Telegram's own."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://core.telegram.org/bots/tutorial#obtain-your-bot-token"
}
