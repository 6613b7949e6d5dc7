package gotify

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "server", Label: "Server", Required: true, Help: "The Gotify server's URL, such as https://gotify.example.com."},
		{Name: "token", Label: "Application token", Required: true, Secret: true,
			Help: "The token of an application made for Herald in Gotify's web UI (Apps > Create application)."},
		{Name: "priority", Label: "Priority", Kind: push.ConfigNumber,
			Help: "Optional, 0 to 10: replaces the application's default priority."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://gotify.net/docs/pushmsg" }
