//go:build go1.27 && goexperiment.jsonv2

package encode

// jsonInvalidUTF8 is what slog's JSONHandler writes for each invalid UTF-8
// byte in a string: from Go 1.27, with encoding/json v2 (the default), the
// replacement character U+FFFD itself.
const jsonInvalidUTF8 = "\ufffd"
