package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bunrouter"
)

// decode reads the JSON object of a request body into v, strictly: see
// decodeJSON. Every refusal is a 4xx that says what is wrong.
func (s *Server) decode(w http.ResponseWriter, req bunrouter.Request, v any) error {
	data, err := io.ReadAll(&depthReader{r: http.MaxBytesReader(w, req.Body, s.maxBody), max: maxDepth})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &httpError{http.StatusRequestEntityTooLarge, "body_too_large",
				fmt.Sprintf("the request body is larger than %d bytes: send a smaller message", s.maxBody)}
		}
		if errors.Is(err, errTooDeep) {
			return push.Errorf(push.Invalid, "invalid_json", "the request body nests objects or arrays more than %d levels deep: send the documented shape", maxDepth)
		}
		return push.Errorf(push.Invalid, "unreadable_body", "the request body could not be read: %v", err)
	}
	return decodeJSON(data, v, s.shapes[reflect.TypeOf(v)])
}

// decodeJSON decodes one JSON object into v. With a shape (the send
// requests' bodies) it is strict: a field v does not hold (or holds in
// another case) is refused rather than ignored, so are a field given twice
// and a string that is not valid UTF-8, holds a lone surrogate escape or a
// NUL character, which the decoder would pass over or alter.
func decodeJSON(data []byte, v any, sh *shape) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return push.Errorf(push.Invalid, "empty_body", "the request body is empty: send a JSON object")
	}
	if trimmed[0] != '{' {
		return push.Errorf(push.Invalid, "invalid_json", "the request body must be a JSON object ({…})")
	}
	if sh != nil && json.Valid(trimmed) {
		if err := checkStrict(trimmed, sh); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(v); err != nil {
		return push.Errorf(push.Invalid, "invalid_json", "%s", describeDecodeError(err, reflect.TypeOf(v)))
	}
	if _, err := dec.Token(); err != io.EOF {
		return push.Errorf(push.Invalid, "invalid_json", "the request body has data after the JSON object: send one JSON object")
	}
	return nil
}

func describeDecodeError(err error, dst reflect.Type) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("the request body is not valid JSON (at byte %d: %s)", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the request body is not valid JSON: it ends too early"
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return "the request body must be a JSON object"
		}
		want := te.Type
		if ft := fieldType(dst, field); ft != nil {
			want = ft
		}
		return fmt.Sprintf("%s must be %s (got %s)", field, typeName(want), te.Value)
	}
	return "the request body is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
}

// fieldType finds the declared type of a dotted JSON field path ("bots.targets")
// in a struct type, looking through pointers and slices.
func fieldType(t reflect.Type, path string) reflect.Type {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		var found reflect.Type
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
				found = f.Type
				break
			}
		}
		if found == nil {
			return nil
		}
		t = found
	}
	return t
}

func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(typeName(t.Elem()), "an "), "a ") + "s"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "of another type"
}

// readSend reads a send: its JSON body into v, then its optional
// Idempotency-Key.
func (s *Server) readSend(w http.ResponseWriter, req bunrouter.Request, v any) (string, error) {
	if err := s.decode(w, req, v); err != nil {
		return "", err
	}
	return idempotencyKey(req.Request)
}

// idempotencyKey reads the optional Idempotency-Key header.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		if err := push.ValidateIdempotencyKey(vals[0]); err != nil {
			return "", err
		}
		return vals[0], nil
	}
	return "", push.Errorf(push.Invalid, "invalid_idempotency_key", "send one Idempotency-Key header, not %d", len(vals))
}

// parseTargetID reads a target id given as a string ("12").
func parseTargetID(field, s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || id <= 0 {
		return 0, push.Errorf(push.Invalid, "invalid_target_id", "%s %q is not a target id: give the numeric id of a target bound to the bot", field, truncate(s, 40))
	}
	return id, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// message builds the engine's message from the request's optional fields.
func message(content *string, msgType *int, imageURL *string, wakeup *bool) push.Message {
	var m push.Message
	if content != nil {
		m.Content = *content
	}
	if msgType != nil {
		m.Type = push.MsgType(*msgType)
	}
	if imageURL != nil {
		m.ImageURL = *imageURL
	}
	if wakeup != nil {
		m.Wakeup = *wakeup
	}
	return m
}

func required(field string) error {
	return push.Errorf(push.Invalid, "missing_field", "%s is required", field)
}
