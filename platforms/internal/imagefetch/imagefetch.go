// Package imagefetch downloads images for platforms that need an upload
// (WeChat, WeCom, Feishu). Fetching a URL a user gave is a server-side
// request, so it is guarded: http and https only; the resolved address is
// checked at dial time, for every redirect too, and loopback, private,
// link-local, shared, multicast and cloud-metadata addresses are refused
// unless an allow-list names them; size, time and content type are capped.
package imagefetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/heraldpush/herald/platforms/internal/httpcall"
	"github.com/heraldpush/herald/push"
)

// Defaults.
const (
	DefaultMaxBytes = 10 << 20
	DefaultTimeout  = 20 * time.Second
	maxRedirects    = 5
)

// Options configure a Fetcher.
type Options struct {
	// MaxBytes caps an image's size (default 10 MiB).
	MaxBytes int64
	// Timeout caps one whole fetch (default 20 s).
	Timeout time.Duration
	// Allow lists networks that may be fetched from although they are
	// loopback or private (for tests and private deployments).
	Allow []netip.Prefix
	// UserAgent is sent with each fetch.
	UserAgent string
}

// Fetcher downloads images safely.
type Fetcher struct {
	opts   Options
	client *http.Client
}

// Image is a downloaded image.
type Image struct {
	Data        []byte
	ContentType string // e.g. image/png
	Filename    string // a name with the right extension, e.g. image.png
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	f := &Fetcher{opts: opts}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us and bypass the address check
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
	}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   opts.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return refusal("the image URL redirects more than %d times", maxRedirects)
			}
			if err := checkScheme(req.URL); err != nil {
				return err
			}
			return nil
		},
	}
	return f
}

// refusedError is a fetch refused by policy; it is never worth a retry.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refusal(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refusal("the image URL must be http or https, not %q", u.Scheme)
	}
	if u.User != nil {
		return refusal("the image URL must not carry a user name or password")
	}
	return nil
}

// control runs after DNS resolution, for every connection, and refuses
// addresses outside the public internet.
func (f *Fetcher) control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return refusal("the image address %q cannot be checked", address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return refusal("the image address %q cannot be checked", address)
	}
	return f.checkAddr(ip.Unmap())
}

// checkAddr refuses non-public addresses that are not allow-listed.
func (f *Fetcher) checkAddr(ip netip.Addr) error {
	for _, p := range f.opts.Allow {
		if p.Contains(ip) {
			return nil
		}
	}
	if why := forbidden(ip); why != "" {
		return refusal("the image host resolves to %s, a %s address, which Herald does not fetch from", ip, why)
	}
	return nil
}

// forbidden names why an address may not be fetched from, or "".
func forbidden(ip netip.Addr) string {
	switch {
	case ip == netip.MustParseAddr("169.254.169.254") || ip == netip.MustParseAddr("fd00:ec2::254") || ip == netip.MustParseAddr("100.100.100.200"):
		return "cloud metadata"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast() || ip.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, p := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "64:ff9b::/96", "2001:db8::/32"} {
		if netip.MustParsePrefix(p).Contains(ip) {
			return "reserved"
		}
	}
	return ""
}

// Fetch downloads an image. accept lists the content types the platform
// takes (e.g. image/png, image/jpeg); empty means any image/*. Errors are
// *push.SendError: Definitive when the image can never be fetched (refused
// address, too large, not an image, 4xx), Retryable when a later attempt
// may work (network failure, 5xx, 429). Nothing reached the platform
// either way.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, accept ...string) (Image, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Image{}, push.DefinitiveError("image_url", "the image URL is not a valid URL")
	}
	if err := checkScheme(u); err != nil {
		return Image{}, push.DefinitiveError("image_url", "%v", err)
	}
	if u.Host == "" {
		return Image{}, push.DefinitiveError("image_url", "the image URL has no host")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := f.checkAddr(ip.Unmap()); err != nil {
			return Image{}, push.DefinitiveError("image_url", "%v", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Image{}, push.DefinitiveError("image_url", "the image URL cannot be requested")
	}
	if f.opts.UserAgent != "" {
		req.Header.Set("User-Agent", f.opts.UserAgent)
	}
	req.Header.Set("Accept", "image/*")
	resp, err := f.client.Do(req)
	if err != nil {
		var re *refusedError
		if errors.As(err, &re) {
			return Image{}, push.DefinitiveError("image_url", "%s", re.msg)
		}
		return Image{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: "image_fetch", Message: "the image could not be downloaded: " + scrub(err), Err: err}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return Image{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: "image_fetch", RetryAfter: httpcall.RetryAfter(resp.Header),
			Message: fmt.Sprintf("the image host answered HTTP %d", resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return Image{}, push.DefinitiveError("image_fetch", "the image host answered HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > f.opts.MaxBytes {
		return Image{}, push.DefinitiveError("image_too_large", "the image is %d bytes; the limit is %d", resp.ContentLength, f.opts.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return Image{}, &push.SendError{Outcome: push.OutcomeRetryable, Code: "image_fetch", Message: "the image download broke off: " + scrub(err), Err: err}
	}
	if int64(len(data)) > f.opts.MaxBytes {
		return Image{}, push.DefinitiveError("image_too_large", "the image is larger than %d bytes", f.opts.MaxBytes)
	}
	if len(data) == 0 {
		return Image{}, push.DefinitiveError("image_empty", "the image URL returned no data")
	}
	ct := contentType(resp.Header.Get("Content-Type"), data)
	if !strings.HasPrefix(ct, "image/") {
		return Image{}, push.DefinitiveError("image_type", "the URL did not return an image (content type %s)", ct)
	}
	if len(accept) > 0 && !contains(accept, ct) {
		return Image{}, push.DefinitiveError("image_type", "the platform does not take %s images: use %s", ct, strings.Join(accept, ", "))
	}
	return Image{Data: data, ContentType: ct, Filename: "image" + extension(ct)}, nil
}

// contentType trusts the bytes over the header: a declared type that the
// content does not bear out is replaced by the sniffed one.
func contentType(header string, data []byte) string {
	sniffed := http.DetectContentType(data)
	if i := strings.IndexByte(sniffed, ';'); i >= 0 {
		sniffed = sniffed[:i]
	}
	declared, _, _ := mime.ParseMediaType(header)
	if strings.HasPrefix(sniffed, "image/") || declared == "" || declared == "application/octet-stream" {
		return sniffed
	}
	// Not an image by its bytes: the declared type stands, be it another
	// type (refused by Fetch), SVG, or an image the sniffer does not know
	// (e.g. HEIC).
	return declared
}

func extension(ct string) string {
	switch ct {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "image/bmp":
		return ".bmp"
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scrub keeps the error text free of the URL (it may carry tokens).
func scrub(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// imageURLError is a refusal of the image URL, which front ends name in
// their own words (imageUrl, image_url).
func imageURLError(reason, format string, args ...any) error {
	e := push.Errorf(push.Invalid, reason, format, args...)
	e.Field = push.FieldImageURL
	return e
}

// CheckURL refuses, before anything is queued or charged, an image URL
// that Fetch would refuse whatever DNS says: a scheme other than http and
// https, a user name or password, or a host that is a literal address (or
// localhost) outside the public internet and not allow-listed. Host names
// are checked by Fetch, at dial time, on the address they resolve to.
func (f *Fetcher) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return imageURLError("invalid_image_url", "the image URL is not an absolute http or https URL")
	}
	if err := checkScheme(u); err != nil {
		return imageURLError("invalid_image_url", "%v", err)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		host = "127.0.0.1"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := f.checkAddr(ip.Unmap()); err != nil {
			return imageURLError("image_url_refused", "%v: give a publicly reachable image URL", err)
		}
	}
	return nil
}
