package wecom

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "mode", Label: "Kind", Choices: []string{ModeApp, ModeRobot},
			Help: "app (the default): a self-built application that messages members; robot: a group robot's webhook, which posts to its one group."},
		{Name: "corp_id", Label: "Corp ID",
			Help: "App mode: the company's CorpID, under My Company > Company Information in the admin console."},
		{Name: "corp_secret", Label: "Secret", Secret: true,
			Help: "App mode: the application's Secret, on its page under App Management (the server's IP must be a trusted IP of the app)."},
		{Name: "agent_id", Label: "AgentId", Kind: push.ConfigNumber,
			Help: "App mode: the application's AgentId, on the same page."},
		{Name: "webhook_key", Label: "Webhook key", Secret: true,
			Help: "Robot mode: the key= part of the group robot's webhook URL."},
		{Name: "duplicate_check_interval", Label: "Duplicate check (seconds)", Kind: push.ConfigNumber,
			Help: "App mode, optional: 1 to 14400 turns on WeCom's duplicate check, so that a message identical to one sent within that many seconds is not delivered again; empty or 0 leaves it off."},
		{Name: "token", Label: "Callback Token", Secret: true,
			Help: "App mode, optional: the Token of the app's API receive settings (up to 32 letters or digits). With it the app hears its members at the server's webhook, for binding them by invite."},
		{Name: "encoding_aes_key", Label: "Callback EncodingAESKey", Secret: true,
			Help: "App mode: the EncodingAESKey of the same settings (43 letters or digits)."},
		{Name: "api_base", Label: "API server", Help: "Replaces the API host (a proxy); empty for WeCom's own."},
		{Name: "token_base", Label: "Token server", Help: "Replaces the host of the token endpoint; empty: the API server."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://developer.work.weixin.qq.com/document/path/91039"
}
