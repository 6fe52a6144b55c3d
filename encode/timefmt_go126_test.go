//go:build !go1.27

package encode

// slogWritesTimeAfterYearError: before Go 1.27, slog's JSONHandler writes
// a time outside years [0,9999] as its error string followed by the time.
const slogWritesTimeAfterYearError = true
