package fake

import (
	"encoding/json"
	"io"
	"net/http"
)

// jsonFault is an answer of the status with v as its JSON body: the
// platform's answer shape that a fake both answers with and hands to
// tests as a scripted fault (e.g. DingTalkFault).
func jsonFault(status int, v any) Fault {
	b, _ := json.Marshal(v)
	return Fault{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: string(b)}
}

// write answers the fault.
func (f Fault) write(w http.ResponseWriter) {
	for k, vs := range f.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, f.Body)
}
