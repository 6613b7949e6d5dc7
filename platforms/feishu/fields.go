package feishu

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "app_id", Label: "App ID", Required: true,
			Help: "The custom app's App ID (cli_…), on its Credentials & Basic Info page in the developer console; the app needs the bot feature."},
		{Name: "app_secret", Label: "App Secret", Required: true, Secret: true,
			Help: "The App Secret on the same page."},
		{Name: "domain", Label: "Platform", Choices: []string{DomainFeishu, DomainLark},
			Help: "feishu for open.feishu.cn (the default), lark for open.larksuite.com."},
		{Name: "receive", Label: "Hear users", Choices: []string{receiveLongConn, receiveWebhook},
			Help: "How the bot hears its users, for binding chats by invite: longconn (the bot opens Feishu's long connection, no public address needed) or webhook (Feishu posts events to the server's public URL). Empty: it does not listen."},
		{Name: "verification_token", Label: "Verification Token", Secret: true,
			Help: "Webhook mode: the Verification Token of the app's Encryption Strategy (Events & Callbacks), checked on every event."},
		{Name: "encrypt_key", Label: "Encrypt Key", Secret: true,
			Help: "Webhook mode, optional: the Encrypt Key of the same page; events are then signed and encrypted."},
		{Name: "api_base", Label: "API server", Help: "Replaces the platform's API host (a proxy); empty for the platform's own."},
		{Name: "token_base", Label: "Token server", Help: "Replaces the host of the token endpoint; empty: the API server."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://open.feishu.cn/document/ukTMukTMukTM/uYTM5UjL2ETO14iNxkTN/terminology"
}
