package console

// Words returns the catalog of a language ("en" or "zh"), for the tests
// that read a page in it.
func Words(lang string) map[string]string {
	if lang == "zh" {
		return chineseWords()
	}
	return englishWords()
}
