package wechat

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "app_id", Label: "AppID", Required: true,
			Help: "The Official Account's AppID (wx followed by 16 characters), under Settings and Development > Basic Configuration; the server's IP address must be on the IP allowlist there."},
		{Name: "app_secret", Label: "AppSecret", Required: true, Secret: true,
			Help: "The AppSecret on the same page (reset it there if nobody kept it)."},
		{Name: "token", Label: "Server Token", Secret: true,
			Help: "Optional: the Token of the server configuration (3 to 32 letters or digits). With it the bot hears its followers at the server's webhook, for binding them by invite."},
		{Name: "encoding_aes_key", Label: "EncodingAESKey", Secret: true,
			Help: "The server configuration's EncodingAESKey (43 letters or digits), for the compatible and safe modes; without it the account must use the plaintext mode."},
		{Name: "token_api", Label: "Token endpoint", Choices: []string{TokenStable, TokenClassic},
			Help: "stable (the default) shares one access token safely between servers; classic invalidates the previous token on every call."},
		{Name: "api_base", Label: "API server", Help: "Replaces the API host (a proxy); empty for WeChat's own."},
		{Name: "token_base", Label: "Token server", Help: "Replaces the token host; empty: the API server."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://developers.weixin.qq.com/doc/offiaccount/Basic_Information/Get_access_token.html"
}
