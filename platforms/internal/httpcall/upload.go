package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"

	"github.com/heraldpush/herald/push"
)

// File is the file part of a multipart/form-data upload.
type File struct {
	Field       string // the form field's name
	Filename    string
	ContentType string
	Data        []byte
	// Disposition holds more parameters of the part's
	// Content-Disposition, written after the filename (e.g.
	// "filelength=1234").
	Disposition string
}

// PostFile posts a multipart/form-data body to url: the fields, in
// order, then the file; header adds to the request's headers.
func (c *Client) PostFile(ctx context.Context, url string, fields [][2]string, f File, header http.Header) (*Response, error) {
	body, contentType, err := multipartBody(fields, f)
	if err != nil {
		return nil, push.DefinitiveError("", "build the upload: %v", err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, push.DefinitiveError("", "the upload request could not be built: check api_base")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	return c.Do(ctx, req)
}

// multipartBody encodes the fields and the file, and returns the body
// and its Content-Type.
func multipartBody(fields [][2]string, f File) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, kv := range fields {
		if err := mw.WriteField(kv[0], kv[1]); err != nil {
			return nil, "", err
		}
	}
	disposition := fmt.Sprintf(`form-data; name="%s"; filename="%s"`, f.Field, f.Filename)
	if f.Disposition != "" {
		disposition += "; " + f.Disposition
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Type", f.ContentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(f.Data); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// NothingSent words a failure that happened before the message itself was
// sent (getting a token, uploading an image), whatever its outcome, after
// during, what was being done. Whatever the platform made of that
// request, no message can have been delivered, so a failure that would be
// uncertain for a send is retryable here.
func NothingSent(err error, during string) error {
	se := push.AsSendError(err)
	msg := se.Message
	if msg == "" && se.Err != nil {
		msg = se.Err.Error()
	}
	out := &push.SendError{Outcome: se.Outcome, Code: se.Code, RetryAfter: se.RetryAfter, Err: se.Err, Message: during + ": " + msg}
	if out.Outcome == push.OutcomeUncertain {
		out.Outcome = push.OutcomeRetryable
		out.Message += "; no message was sent"
	}
	return out
}
