package pushplus

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "token", Label: "User token", Required: true, Secret: true,
			Help: "The user token (用户令牌) of your PushPlus account."},
		{Name: "topic", Label: "Group code", Help: "Optional: a group's code (群组编码) to send to; empty sends to the token's owner."},
		{Name: "api_base", Label: "API server", Help: "Optional: a proxy's URL; empty for PushPlus's own."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://www.pushplus.plus/doc/" }
