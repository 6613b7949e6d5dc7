package bark

import "github.com/heraldpush/herald/push"

var _ push.ConfigDescriber = (*Provider)(nil)

// ConfigFields implements push.ConfigDescriber: the fields of Config.
func (p *Provider) ConfigFields() []push.ConfigField {
	return []push.ConfigField{
		{Name: "device_key", Label: "Device key", Required: true, Secret: true,
			Help: "The key the Bark app shows for this device (in the app's server list)."},
		{Name: "server", Label: "Server", Help: "A self-hosted Bark server's URL; empty for " + DefaultServer + "."},
		{Name: "group", Label: "Group", Help: "Optional: the group the notifications are gathered under on the device."},
	}
}

// SetupGuide implements push.ConfigDescriber.
func (p *Provider) SetupGuide() string { return "https://bark.day.app/#/tutorial" }
