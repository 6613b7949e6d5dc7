package fake

import "strings"

// randomAlnum is n random letters and digits: the keys and tokens of the
// relay and webhook fakes.
func randomAlnum(n int) string {
	s := strings.NewReplacer("_", "", "-", "").Replace(randomSecret(n + n/2 + 4))
	for len(s) < n {
		s += strings.NewReplacer("_", "", "-", "").Replace(randomSecret(n))
	}
	return s[:n]
}
