//go:build !go1.27 || !goexperiment.jsonv2

package encode

// jsonInvalidUTF8 is what slog's JSONHandler writes for each invalid UTF-8
// byte in a string: the escape \ufffd, as before Go 1.27 or with
// GOEXPERIMENT=nojsonv2.
const jsonInvalidUTF8 = `\ufffd`
