package msgtext

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Plain renders Markdown (CommonMark with GitHub strikethrough) as plain
// text: markup is dropped, each block is a paragraph of its own, list items
// get "•" or their number, links keep their text, images their alt text.
func Plain(src string) string {
	source := []byte(src)
	md := goldmark.New(goldmark.WithExtensions(extension.Strikethrough))
	doc := md.Parser().Parse(text.NewReader(source))
	p := plainer{src: source}
	p.blocks(doc, 0)
	return strings.TrimSpace(p.out.String())
}

type plainer struct {
	src []byte
	out strings.Builder
}

func (p *plainer) sep() {
	if p.out.Len() > 0 && !strings.HasSuffix(p.out.String(), "\n") {
		p.out.WriteByte('\n')
	}
}

func (p *plainer) blocks(n ast.Node, depth int) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		p.block(c, depth)
	}
}

func (p *plainer) block(n ast.Node, depth int) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		p.sep()
		p.inlines(n)
	case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
		p.sep()
		ls := n.Lines()
		for i := 0; i < ls.Len(); i++ {
			seg := ls.At(i)
			p.out.Write(seg.Value(p.src))
		}
	case *ast.ThematicBreak:
		p.sep()
		p.out.WriteString("———")
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			p.sep()
			p.out.WriteString(strings.Repeat("  ", depth))
			if n.IsOrdered() {
				p.out.WriteString(strconv.Itoa(num) + ". ")
				num++
			} else {
				p.out.WriteString("• ")
			}
			first := true
			for c := item.FirstChild(); c != nil; c = c.NextSibling() {
				switch c.(type) {
				case *ast.Paragraph, *ast.TextBlock:
					if !first {
						p.sep()
					}
					p.inlines(c)
				default:
					p.block(c, depth+1)
				}
				first = false
			}
		}
	default:
		p.blocks(n, depth)
	}
}

func (p *plainer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(p.src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			p.out.Write(v)
			if c.HardLineBreak() || c.SoftLineBreak() {
				p.out.WriteByte('\n')
			}
		case *ast.String:
			p.out.Write(c.Value)
		case *ast.AutoLink:
			p.out.Write(c.Label(p.src))
		case *ast.RawHTML:
			segs := c.Segments
			for i := 0; i < segs.Len(); i++ {
				seg := segs.At(i)
				p.out.Write(seg.Value(p.src))
			}
		default:
			p.inlines(c)
		}
	}
}
