package telegram_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/platforms/telegram"
)

// checkTelegramValid asserts that html is what Telegram accepts and keeps
// whole: it parses with the fake's Telegram parser, no entity breaks
// Telegram's nesting rules, and VisibleLength counts what Telegram counts.
func checkTelegramValid(t *testing.T, src, html string) {
	t.Helper()
	plain, err := fake.ParseTelegramHTML(html)
	if err != nil {
		t.Fatalf("MarkdownToHTML(%q) = %q, which Telegram refuses: %v", src, html, err)
	}
	if p := fake.TelegramEntityProblem(html); p != "" {
		t.Fatalf("MarkdownToHTML(%q) = %q: Telegram would drop formatting: %s", src, html, p)
	}
	if got, want := telegram.VisibleLength(html), len(utf16.Encode([]rune(plain))); got != want {
		t.Fatalf("VisibleLength(%q) = %d, Telegram counts %d", html, got, want)
	}
	// Outside tags, <, > and & appear only escaped.
	inTag := false
	for i := 0; i < len(html); i++ {
		switch c := html[i]; {
		case c == '<':
			inTag = true
		case c == '>' && inTag:
			inTag = false
		case c == '>':
			t.Fatalf("MarkdownToHTML(%q) = %q: a bare > at byte %d", src, html, i)
		case c == '&' && !inTag:
			rest := html[i:]
			if !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") && !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&quot;") {
				t.Fatalf("MarkdownToHTML(%q) = %q: an unescaped & at byte %d", src, html, i)
			}
		}
	}
}

func TestMarkdownToHTML(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"inline styles", "Some **bold** and *it* and ~~gone~~ and ||secret||.",
			"Some <b>bold</b> and <i>it</i> and <s>gone</s> and <tg-spoiler>secret</tg-spoiler>."},
		{"underscore styles", "__bold__ _it_", "<b>bold</b> <i>it</i>"},
		{"single tilde", "~single~ tilde", "<s>single</s> tilde"},
		{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
		{"heading levels", "### Three\n###### Six", "<b>Three</b>\n\n<b>Six</b>"},
		{"setext heading", "Title\n=====", "<b>Title</b>"},
		{"bold in heading is not nested", "# A **b** c", "<b>A b c</b>"},
		{"code in heading", "## `code` in heading", "<code>code</code><b> in heading</b>"},
		{"code inside bold splits it", "**bold `code` more**", "<b>bold </b><code>code</code><b> more</b>"},
		{"code at the start of bold", "**`code` at start**", "<code>code</code><b> at start</b>"},
		{"code in nested styles", "*a **b `c` d** e*", "<i>a <b>b </b></i><code>c</code><i><b> d</b> e</i>"},
		{"code only in styles", "~~**`x`**~~", "<code>x</code>"},
		{"code in a link is text", "[link `code` text](https://e.com)", `<a href="https://e.com">link code text</a>`},
		{"bold in a link", "[**bold link**](https://e.com)", `<a href="https://e.com"><b>bold link</b></a>`},
		{"bold italic", "***both***", "<i><b>both</b></i>"},
		{"same style nested", "**a *b **c** d* e**", "<b>a <i>b c d</i> e</b>"},
		{"spoiler with bold", "||spoiler with **bold**||", "<tg-spoiler>spoiler with <b>bold</b></tg-spoiler>"},
		{"pipes that are not spoilers", "a |pipe| and |||three||| b", "a |pipe| and |||three||| b"},
		{"unclosed spoiler", "||open", "||open"},
		{"code span", "run `rm -rf <dir> && ls`", "run <code>rm -rf &lt;dir&gt; &amp;&amp; ls</code>"},
		{"fenced code", "```\n<pre> & </pre>\n```", "<pre>&lt;pre&gt; &amp; &lt;/pre&gt;</pre>"},
		{"fenced code with language", "```c++\nint a;\n```", `<pre><code class="language-c++">int a;</code></pre>`},
		{"language sanitized", "```go\" onclick=\"x\nx\n```", `<pre><code class="language-go">x</code></pre>`},
		{"indented code", "    indented code", "<pre>indented code</pre>"},
		{"quote", "> quoted **text**", "<blockquote>quoted <b>text</b></blockquote>"},
		{"nested quote is flattened", "> quote\n>\n> > nested", "<blockquote>quote\n\nnested</blockquote>"},
		{"code in a quote", "> ```go\n> x := 1\n> ```", `<blockquote><pre><code class="language-go">x := 1</code></pre></blockquote>`},
		{"bullet list", "- a\n- b\n* c", "• a\n• b\n\n• c"},
		{"nested lists", "- a\n- b\n  1. one\n  2. two\n- c", "• a\n• b\n  1. one\n  2. two\n• c"},
		{"ordered list start", "3. three\n4. four", "3. three\n4. four"},
		{"task list", "- [ ] todo\n- [x] done", "• [ ] todo\n• [x] done"},
		{"image as a link", "![alt](https://e.com/i.png)", `<a href="https://e.com/i.png">alt</a>`},
		{"image alt with an entity and a line break", "![a &amp; b\nc](https://e.com/i.png)", `<a href="https://e.com/i.png">a &amp; b c</a>`},
		{"image without alt", "![](https://e.com/j.png)", `<a href="https://e.com/j.png">https://e.com/j.png</a>`},
		{"image in a link", "[![img](https://e.com/i.png)](https://e.com/page)", `<a href="https://e.com/page">img</a>`},
		{"image with unsafe URL", "![x](javascript:alert(1))", "x"},
		{"unsafe and relative links", "[js](javascript:alert(1)) [rel](/path)", "js rel"},
		{"tg and mailto links", "[me](tg://user?id=1) [mail](mailto:a@b.c)", `<a href="tg://user?id=1">me</a> <a href="mailto:a@b.c">mail</a>`},
		{"autolinks", "<https://auto.link> <me@example.com>", `<a href="https://auto.link">https://auto.link</a> <a href="mailto:me@example.com">me@example.com</a>`},
		{"empty link text", "[](https://e.com)", `<a href="https://e.com">https://e.com</a>`},
		{"quotes in a URL", `[q"uote](https://e.com/?a="b"&c=<d>)`, `<a href="https://e.com/?a=&quot;b&quot;&amp;c=&lt;d&gt;">q"uote</a>`},
		{"raw HTML is text", "<b>raw</b> & <i>html</i> 1 < 2 > 0", "&lt;b&gt;raw&lt;/b&gt; &amp; &lt;i&gt;html&lt;/i&gt; 1 &lt; 2 &gt; 0"},
		{"HTML block is text", "<div>\n<p>x</p>\n</div>", "&lt;div&gt;\n&lt;p&gt;x&lt;/p&gt;\n&lt;/div&gt;"},
		{"HTML block with an end line is text", "<script>\nx\n</script>\n\nafter", "&lt;script&gt;\nx\n&lt;/script&gt;\n\nafter"},
		{"HTML comments are hidden", "<!-- hidden -->\n\ntext <!-- also --> end", "text  end"},
		{"entities", "&copy; &nbsp;x &amp; &#128512; &lt;tag&gt;", "© \u00a0x &amp; 😀 &lt;tag&gt;"},
		{"backslash escapes", `\*not\* \_it\_ \|\|no\|\|`, "*not* _it_ ||no||"},
		{"line breaks", "a  \nb\\\nc\nd", "a\nb\nc\nd"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"table stays text", "| a | b |\n|---|---|\n| 1 | 2 |", "| a | b |\n|---|---|\n| 1 | 2 |"},
		{"emoji", "😀 **😀**", "😀 <b>😀</b>"},
		{"invalid UTF-8 and NUL", "a\xffb\x00c", "a\uFFFDb\uFFFDc"},
		{"whitespace only", "   \n\n  ", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := telegram.MarkdownToHTML(c.in)
			if got != c.want {
				t.Fatalf("MarkdownToHTML(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			checkTelegramValid(t, c.in, got)
		})
	}
}

// TestMarkdownToHTMLAlwaysValid: whatever Markdown comes in, Telegram
// accepts the HTML and keeps its entities. Inputs are random mixes of
// Markdown syntax, HTML-like text and entities.
func TestMarkdownToHTMLAlwaysValid(t *testing.T) {
	pieces := []string{
		"**", "*", "_", "__", "~~", "~", "||", "|", "`", "```", "```go\n", "\n", "\n\n", "> ", "- ", "1. ", "# ", "    ",
		"[", "]", "(", ")", "](https://e.com/x?a=1&b=2)", "![", "<", ">", "&", "&amp;", "&lt;", "&#x1F600;", "&#0;", "&bogus;",
		"<b>", "</b>", "<a href=\"x\">", "<br>", "<!--", "-->", "\\", "\"", "'", "word", " ", "中文", "😀", "\u200b",
		"https://auto.link", "<https://e.com>", "---", "===", "[ref]: https://e.com\n", "[ref]",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for n := rng.IntN(30); n >= 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		src := b.String()
		checkTelegramValid(t, src, telegram.MarkdownToHTML(src))
	}
}

// FuzzMarkdownToHTML checks the same property on fuzzed input (the seed
// corpus runs with go test).
func FuzzMarkdownToHTML(f *testing.F) {
	for _, s := range []string{"**a `b` c**", "> > x", "||s||", "[a](https://x)", "<b>", "```\n`\n```", "- **`x`**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkTelegramValid(t, src, telegram.MarkdownToHTML(src))
	})
}

func TestVisibleLength(t *testing.T) {
	cases := []struct {
		html string
		want int
	}{
		{"plain", 5},
		{"<b>bold</b>", 4},
		{"&lt;&gt;&amp;&quot;", 4},
		{"&lt&gt", 2},
		{"&nbsp;", 6},
		{"&#128512;", 2},
		{"&#x1F600;", 2},
		{"&#0;", 4},
		{"😀", 2},
		{"中文", 2},
		{`<a href="https://e.com/&amp;">x</a>`, 1},
		{"a & b", 5},
	}
	for _, c := range cases {
		if got := telegram.VisibleLength(c.html); got != c.want {
			t.Errorf("VisibleLength(%q) = %d, want %d", c.html, got, c.want)
		}
		if plain, err := fake.ParseTelegramHTML(c.html); err == nil && len(utf16.Encode([]rune(plain))) != c.want {
			t.Errorf("the fake counts %q as %d, want %d", c.html, len(utf16.Encode([]rune(plain))), c.want)
		}
	}
}

func BenchmarkMarkdownToHTML(b *testing.B) {
	src := strings.Repeat("# Release\n\n**Fixed** `bug` in [parser](https://e.com/p?a=1&b=2), ||spoiler||.\n\n- one\n- two\n\n```go\nx := 1\n```\n\n", 12)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		telegram.MarkdownToHTML(src)
	}
}
