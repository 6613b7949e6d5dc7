package platforms

import (
	"errors"
	"fmt"

	"github.com/heraldpush/herald/push"
)

// Set holds providers by the name a bot gives as its platform
// ("telegram"). It is a map of the type push.Options.Platforms takes, and
// is given to the engine as it is. It takes any push.Platform: built-in
// providers (package builtin, or each provider's New) and an
// application's own. A nil Set cannot be added to: start from Set{} or
// from builtin.Platforms.
type Set map[string]push.Platform

// Add adds p to s as name. It refuses an empty name, a nil p, and a name s
// already has, so that an application's own provider never takes the
// place of another by accident; to replace a provider on purpose, assign
// s[name].
func (s Set) Add(name string, p push.Platform) error {
	switch old, taken := s[name]; {
	case name == "":
		return errors.New("platforms: a provider needs a name: bots name their platform by it")
	case p == nil:
		return fmt.Errorf("platforms: the provider for %q is nil", name)
	case taken:
		return fmt.Errorf("platforms: the name %q is taken by a %T: choose another, or assign it to replace that provider", name, old)
	}
	s[name] = p
	return nil
}
