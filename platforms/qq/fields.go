package qq

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "app_id", Label: "AppID", Required: true,
			Help: "The bot's AppID (digits), under Development > Development Settings in the QQ bot console (q.qq.com)."},
		{Name: "client_secret", Label: "AppSecret", Required: true, Secret: true,
			Help: "The bot's AppSecret on the same page."},
		{Name: "sandbox", Label: "Sandbox", Kind: push.ConfigBool,
			Help: "Send through the sandbox API, which reaches only the sandbox users and groups set in the console."},
		{Name: "receive", Label: "Hear users", Choices: []string{receiveGateway, receiveWebhook, receiveNone},
			Help: "How the bot hears its users, for binding chats by invite and for replying within QQ's reply window: gateway (the default: QQ's WebSocket gateway, no public address needed), webhook (QQ calls the server's public URL, set as the callback URL in the console) or none."},
		{Name: "api_base", Label: "API server", Help: "Replaces the API host (a proxy); empty for QQ's own."},
		{Name: "token_base", Label: "Token server", Help: "Replaces the host of the app access token endpoint; empty for QQ's own."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://bot.q.qq.com/wiki/develop/api-v2/dev-prepare/interface-framework/api-use.html"
}
