package transport

import (
	"errors"
	"io"
)

// maxDepth is the deepest JSON nesting a request may have. The contract's
// deepest body (the multi-bot batch) nests three levels.
const maxDepth = 16

var errTooDeep = errors.New("the JSON body is nested too deeply")

// depthReader passes a JSON body through while tracking its nesting depth
// outside strings, and fails as soon as the depth passes max: a hostile body
// is refused without being read to its end.
type depthReader struct {
	r        io.Reader
	max      int
	depth    int
	inString bool
	escaped  bool
}

func (d *depthReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	for _, c := range p[:n] {
		switch {
		case d.inString:
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
		case c == '"':
			d.inString = true
		case c == '{' || c == '[':
			d.depth++
			if d.depth > d.max {
				return 0, errTooDeep
			}
		case c == '}' || c == ']':
			d.depth--
		}
	}
	return n, err
}
