package console

import (
	"fmt"
	"html/template"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// qrSVG draws text as a QR code in an inline SVG, made on the server: one
// path of unit squares, with its quiet zone, scaled by the page's style.
func qrSVG(text, label string) (template.HTML, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return "", fmt.Errorf("console: QR code: %w", err)
	}
	bm := q.Bitmap()
	var d strings.Builder
	for y, row := range bm {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&d, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	n := len(bm)
	svg := fmt.Sprintf(`<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s" shape-rendering="crispEdges">`+
		`<rect width="%d" height="%d" fill="#fff"/><path d="%s" fill="#000"/></svg>`,
		n, n, template.HTMLEscapeString(label), n, n, d.String())
	return template.HTML(svg), nil // the path is digits and letters; the label is escaped
}
