package push

import "encoding/json"

// BotMessageValidator is implemented by platforms whose message limits
// depend on the bot's configuration (for example a WeCom bot, whose
// group-robot mode takes longer Markdown than its application mode). The
// engine calls ValidateBotMessage instead of ValidateMessage for them,
// before anything is queued or charged.
type BotMessageValidator interface {
	ValidateBotMessage(config json.RawMessage, m Message, tt TargetType) error
}

// validateMessage asks p whether it can send m to a target of type tt
// through bot b.
func validateMessage(p Platform, b Bot, m Message, tt TargetType) error {
	if bv, ok := p.(BotMessageValidator); ok {
		return bv.ValidateBotMessage(b.Config, m, tt)
	}
	return p.ValidateMessage(m, tt)
}
