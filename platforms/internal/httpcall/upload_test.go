package httpcall

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/push"
)

// part is one part of a multipart body as a server reads it.
type part struct {
	Disposition, ContentType, Body string
}

func TestPostFile(t *testing.T) {
	var got []part
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || ct != "multipart/form-data" {
			http.Error(w, "not multipart", http.StatusBadRequest)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b, _ := io.ReadAll(p)
			got = append(got, part{p.Header.Get("Content-Disposition"), p.Header.Get("Content-Type"), string(b)})
		}
	}))
	defer srv.Close()
	c := New(Options{})
	tests := []struct {
		name   string
		fields [][2]string
		file   File
		header http.Header
		want   []part
	}{
		{"a field, then the file", [][2]string{{"image_type", "message"}},
			File{Field: "image", Filename: "a.png", ContentType: "image/png", Data: []byte("PNG")},
			http.Header{"Authorization": {"Bearer t"}},
			[]part{{`form-data; name="image_type"`, "", "message"}, {`form-data; name="image"; filename="a.png"`, "image/png", "PNG"}}},
		{"more disposition parameters", nil,
			File{Field: "media", Filename: "b.jpg", ContentType: "image/jpeg", Data: []byte("JPEG"), Disposition: "filelength=4"},
			nil,
			[]part{{`form-data; name="media"; filename="b.jpg"; filelength=4`, "image/jpeg", "JPEG"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, auth = nil, ""
			resp, err := c.PostFile(context.Background(), srv.URL+"/upload", tt.fields, tt.file, tt.header)
			if err != nil || resp.Status != http.StatusOK {
				t.Fatalf("PostFile: %v, %+v", err, resp)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
			if want := tt.header.Get("Authorization"); auth != want {
				t.Errorf("Authorization %q, want %q", auth, want)
			}
		})
	}
	_, err := c.PostFile(context.Background(), "http://[::1", nil, File{Field: "f"}, nil)
	var se *push.SendError
	if !errors.As(err, &se) || se.Outcome != push.OutcomeDefinitive {
		t.Fatalf("a bad URL: %v, want a definitive failure", err)
	}
}

func TestNothingSent(t *testing.T) {
	tests := []struct {
		name string
		in   *push.SendError
		want push.Outcome
		text string // the reworded error's text
	}{
		{"uncertain becomes retryable", &push.SendError{Outcome: push.OutcomeUncertain, Code: "500", Message: "no answer"}, push.OutcomeRetryable,
			"uploading: no answer; no message was sent (code 500)"},
		{"retryable stays", &push.SendError{Outcome: push.OutcomeRetryable, Code: "-1", Message: "busy"}, push.OutcomeRetryable,
			"uploading: busy (code -1)"},
		{"definitive stays", &push.SendError{Outcome: push.OutcomeDefinitive, Code: "40009", Message: "refused"}, push.OutcomeDefinitive,
			"uploading: refused (code 40009)"},
	}
	for _, tt := range tests {
		got := push.AsSendError(NothingSent(tt.in, "uploading"))
		if got.Outcome != tt.want || got.Code != tt.in.Code || got.Error() != tt.text {
			t.Errorf("%s: %s %q, want %s %q", tt.name, got.Outcome, got.Error(), tt.want, tt.text)
		}
	}
}
