package transport

// OpenAPIPath is openAPIPath, for the black-box tests that compare the
// route table with the document.
func OpenAPIPath(p string) string { return openAPIPath(p) }
