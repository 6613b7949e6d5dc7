package mdlinks

import "testing"

func TestImagesToLinks(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no image", "**b** [l](u)", "**b** [l](u)"},
		{"image", "see ![chart](https://e.com/c.png)", "see [chart](https://e.com/c.png)"},
		{"image with title", `![c](https://e.com/c.png "t")`, `[c](https://e.com/c.png "t")`},
		{"empty alt", "![](https://e.com/c.png)", "[https://e.com/c.png](https://e.com/c.png)"},
		{"empty alt angle", "![](<https://e.com/a b.png>)", "[https://e.com/a b.png](<https://e.com/a b.png>)"},
		{"reference", "![alt][ref]\n\n[ref]: https://e.com/x.png", "[alt][ref]\n\n[ref]: https://e.com/x.png"},
		{"escaped", `\![not](x)`, `\![not](x)`},
		{"code span", "`![a](b)` and ![c](d)", "`![a](b)` and [c](d)"},
		{"double backtick span", "``x ![a](b) ` y`` ![c](d)", "``x ![a](b) ` y`` [c](d)"},
		{"unclosed span", "`![a](b)", "`[a](b)"},
		{"fenced", "```\n![a](b)\n```\n![c](d)", "```\n![a](b)\n```\n[c](d)"},
		{"tilde fence", "~~~~go\n![a](b)\n~~~\n![x](y)\n~~~~\n![c](d)", "~~~~go\n![a](b)\n~~~\n![x](y)\n~~~~\n[c](d)"},
		{"nested brackets", "![a [b] c](d)", "[a [b] c](d)"},
		{"unclosed bracket", "![a (b)", "![a (b)"},
		{"bang alone", "wow! [x](y)", "wow! [x](y)"},
		{"two images", "![a](1) ![b](2)", "[a](1) [b](2)"},
		{"cjk", "图 ![图片](https://e.com/图.png) 完", "图 [图片](https://e.com/图.png) 完"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ImagesToLinks(c.in); got != c.want {
				t.Errorf("ImagesToLinks(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
