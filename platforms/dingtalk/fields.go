package dingtalk

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "access_token", Label: "Access token", Required: true, Secret: true,
			Help: "The access_token= part of the custom robot's webhook URL, shown when the robot is added to the group (group settings > Bots)."},
		{Name: "secret", Label: "Signing secret", Secret: true,
			Help: "The secret (SEC…) of the robot's signing security setting (加签), when it has that setting."},
		{Name: "keywords", Label: "Keywords", Kind: push.ConfigList,
			Help: "The robot's custom keywords, one per line, when it has that security setting: a message must contain one of them, and one without is refused."},
		{Name: "api_base", Label: "API server", Help: "Replaces DingTalk's API base URL (a proxy); empty for DingTalk's own."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string {
	return "https://open.dingtalk.com/document/robots/custom-robot-access"
}
