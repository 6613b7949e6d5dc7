package slack

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "webhook_url", Label: "Incoming webhook URL", Required: true, Secret: true,
			Help: "The URL of the channel's incoming webhook; it is a credential."},
		{Name: "flavor", Label: "Server", Choices: []string{"slack", "mattermost", "rocketchat"},
			Help: "Which server the webhook belongs to; empty for Slack."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://api.slack.com/messaging/webhooks" }
