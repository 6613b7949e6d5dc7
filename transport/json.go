package transport

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// envelope is the body of every answer that is not a refusal.
type envelope struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":500,"message":"internal error: the answer could not be encoded","error":"internal"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeOK(w http.ResponseWriter, status int, message string, data any) {
	writeJSON(w, status, envelope{Code: 0, Message: message, Data: data})
}
