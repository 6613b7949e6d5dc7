package botconfig

// Printable reports whether s is printable ASCII without spaces, the
// shape of most tokens and user names.
func Printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
