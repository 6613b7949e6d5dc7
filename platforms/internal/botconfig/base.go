package botconfig

import "strings"

// BaseOr is the base URL that an optional field checked by BaseURL gives,
// without a trailing slash, or def when the field is empty.
func BaseOr(value, def string) string {
	if value == "" {
		return def
	}
	return strings.TrimRight(value, "/")
}
