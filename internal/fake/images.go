package fake

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Images is an image host on loopback for image messages: it serves the
// files it was given at their paths and counts the fetches. Herald's image
// fetcher refuses loopback unless it is allow-listed (testkit.New does;
// `herald serve --image-fetch-allow 127.0.0.0/8` does for a process).
type Images struct {
	srv *httptest.Server

	mu      sync.Mutex
	files   map[string]imageFile
	fetches map[string]int
}

type imageFile struct {
	data        []byte
	contentType string
}

// NewImages starts an image host serving /chart.png (a small PNG) and
// /photo.jpg (a small JPEG), closed when the test ends.
func NewImages(tb testing.TB) *Images {
	im := &Images{files: make(map[string]imageFile), fetches: make(map[string]int)}
	im.files["/chart.png"] = imageFile{data: PNG(1), contentType: "image/png"}
	im.files["/photo.jpg"] = imageFile{data: JPEG(2), contentType: "image/jpeg"}
	im.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		im.mu.Lock()
		f, ok := im.files[r.URL.Path]
		im.fetches[r.URL.Path]++
		im.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.contentType)
		_, _ = w.Write(f.data)
	}))
	if tb != nil {
		tb.Cleanup(im.srv.Close)
	}
	return im
}

// Add serves data at path (e.g. "/chart.png") and returns its URL.
func (im *Images) Add(path string, data []byte, contentType string) string {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.files[path] = imageFile{data: data, contentType: contentType}
	return im.srv.URL + path
}

// URL returns the URL of path, served or not.
func (im *Images) URL(path string) string { return im.srv.URL + path }

// Data returns the bytes served at path.
func (im *Images) Data(path string) []byte {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.files[path].data
}

// Fetches returns how often path was requested.
func (im *Images) Fetches(path string) int {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.fetches[path]
}

// testImage is a small picture whose pixels depend on seed, so that
// images with different seeds have different bytes.
func testImage(seed int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for y := 0; y < 12; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x*16 + seed), G: uint8(y*20 + seed*3), B: uint8(seed * 7), A: 255})
		}
	}
	return img
}

// PNG returns a small PNG image; seed varies its pixels.
func PNG(seed int) []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, testImage(seed))
	return b.Bytes()
}

// JPEG returns a small JPEG image; seed varies its pixels.
func JPEG(seed int) []byte {
	var b bytes.Buffer
	_ = jpeg.Encode(&b, testImage(seed), nil)
	return b.Bytes()
}

// GIF returns a small GIF image; seed varies its pixels.
func GIF(seed int) []byte {
	var b bytes.Buffer
	_ = gif.Encode(&b, testImage(seed), nil)
	return b.Bytes()
}

// LargePNG returns a valid, uncompressed PNG of noise of a little more
// than n bytes, for size limits.
func LargePNG(n int) []byte {
	const width = 512
	img := image.NewNRGBA(image.Rect(0, 0, width, n/(width*3)+1))
	_, _ = rand.Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff // opaque: encoded as RGB
	}
	var b bytes.Buffer
	_ = (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img)
	return b.Bytes()
}

// SHA256 is the hex SHA-256 of data, for comparing uploaded bytes.
func SHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
