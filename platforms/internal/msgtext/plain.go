package msgtext

import "github.com/heraldpush/herald/platforms/internal/mdtext"

// Plain renders Markdown as plain text (see mdtext.Render), keeping only
// the visible text of links and the alt text of images: the form for
// titles and other places with no room for addresses.
func Plain(src string) string {
	return mdtext.Render(src, func(label, _ string) string { return label })
}
