//go:build go1.27

package encode

// slogWritesTimeAfterYearError: from Go 1.27, slog's JSONHandler writes a
// time outside years [0,9999] as its error string alone.
const slogWritesTimeAfterYearError = false
