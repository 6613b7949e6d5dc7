package serverchan

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "sendkey", Label: "SendKey", Required: true, Secret: true,
			Help: "The SendKey of your ServerChan account: SCT… (sct.ftqq.com) or sctp… (ServerChan³)."},
		{Name: "api_base", Label: "API server", Help: "Optional: a proxy's URL; empty for ServerChan's own."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://sct.ftqq.com/sendkey" }
