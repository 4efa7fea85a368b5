package ext

// Twice is the API under test.
func Twice(s string) string { return s + s }
