// Package botconfig decodes and checks bot configurations for every
// provider the same way: strict JSON, errors that name the field, and
// never a credential in an error.
package botconfig

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/heraldpush/herald/push"
)

// Decode reads raw into v, refusing unknown fields. Errors are Invalid and
// name the platform and the field.
func Decode(platform string, raw json.RawMessage, v any, shape string) error {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return push.Errorf(push.Invalid, "invalid_config", "%s bot config: %s: give %s", platform, describe(err), shape)
	}
	if dec.More() {
		return push.Errorf(push.Invalid, "invalid_config", "%s bot config: more than one JSON value: give %s", platform, shape)
	}
	return nil
}

func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return "not a JSON object"
		}
		return "field " + te.Field + " must be a " + te.Type.Kind().String()
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return "unknown field " + strings.TrimPrefix(msg, "json: unknown field ")
	}
	return "not a JSON object"
}

// Missing is the error for a required field left empty.
func Missing(platform, field, what string) error {
	return push.Errorf(push.Invalid, "invalid_config", "%s bot config: %s is missing: give %s", platform, field, what)
}

// Malformed is the error for a field of the wrong shape. It never quotes
// the value, which may be a credential.
func Malformed(platform, field, want string) error {
	return push.Errorf(push.Invalid, "invalid_config", "%s bot config: %s is malformed: %s", platform, field, want)
}

// BaseURL checks an optional base URL field: empty, or an absolute http or
// https URL without query or fragment.
func BaseURL(platform, field, value string) error {
	if value == "" {
		return nil
	}
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return Malformed(platform, field, "give an http or https URL without a query, e.g. https://proxy.example.com")
	}
	return nil
}

// Redact replaces every occurrence of the secrets (tokens, keys from a
// bot's config) in a platform's text with "[redacted]", for platforms
// that echo a credential in their error messages.
func Redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// maxCached bounds a Cache; a full cache starts afresh.
const maxCached = 1024

// Cache remembers configs decoded and checked, by their raw JSON, so that
// a provider does the work once per bot instead of at every send. Only
// valid configs are kept. The zero value is ready to use.
type Cache[T any] struct {
	mu sync.RWMutex
	m  map[string]T
}

// Get returns the config decoded from raw, calling parse on the first use
// of raw.
func (c *Cache[T]) Get(raw json.RawMessage, parse func(json.RawMessage) (T, error)) (T, error) {
	c.mu.RLock()
	v, ok := c.m[string(raw)]
	c.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := parse(raw)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = make(map[string]T)
	}
	c.m[string(raw)] = v
	return v, nil
}
