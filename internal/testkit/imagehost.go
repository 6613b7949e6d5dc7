package testkit

import (
	"bytes"
	"crypto/rand"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// ImageHost serves images on loopback for providers that download images
// before uploading them. Herald's image fetcher refuses loopback unless it
// is allow-listed (testkit.New does; `herald serve --image-fetch-allow
// 127.0.0.0/8` does for a process).
type ImageHost struct {
	srv *httptest.Server

	mu    sync.Mutex
	files map[string]hostedImage
	hits  map[string]int
}

type hostedImage struct {
	contentType string
	data        []byte
}

// NewImageHost starts an image server with /chart.png (a small PNG) and
// /photo.jpg (a small JPEG), closed when the test ends.
func NewImageHost(tb testing.TB) *ImageHost {
	h := &ImageHost{files: make(map[string]hostedImage), hits: make(map[string]int)}
	h.Add("/chart.png", "image/png", SamplePNG(64, 48))
	h.Add("/photo.jpg", "image/jpeg", SampleJPEG(80, 60))
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		f, ok := h.files[r.URL.Path]
		h.hits[r.URL.Path]++
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.contentType)
		_, _ = w.Write(f.data)
	}))
	if tb != nil {
		tb.Cleanup(h.srv.Close)
	}
	return h
}

// Add serves data at path with the content type.
func (h *ImageHost) Add(path, contentType string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[path] = hostedImage{contentType: contentType, data: data}
}

// URL returns the address of path.
func (h *ImageHost) URL(path string) string { return h.srv.URL + path }

// Data returns the bytes served at path.
func (h *ImageHost) Data(path string) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files[path].data
}

// Hits returns how often path was fetched.
func (h *ImageHost) Hits(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// SamplePNG returns a w×h PNG with a gradient.
func SamplePNG(w, h int) []byte {
	var buf bytes.Buffer
	_ = png.Encode(&buf, sample(w, h))
	return buf.Bytes()
}

// SampleJPEG returns a w×h JPEG with a gradient.
func SampleJPEG(w, h int) []byte {
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, sample(w, h), &jpeg.Options{Quality: 80})
	return buf.Bytes()
}

// LargePNG returns a valid, uncompressed PNG of noise of a little more
// than n bytes.
func LargePNG(n int) []byte {
	const width = 512
	img := image.NewNRGBA(image.Rect(0, 0, width, n/(width*3)+1)) // opaque: encoded as RGB
	_, _ = rand.Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 0xff
	}
	var buf bytes.Buffer
	_ = (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img)
	return buf.Bytes()
}

func sample(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 0x80, 0xff})
		}
	}
	return img
}
