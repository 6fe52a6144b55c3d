//go:build !go1.27

package encode

import "encoding"

// marshalText returns a's text as slog's TextHandler takes it before Go
// 1.27: from encoding.TextMarshaler; ok is false when a has no such method.
func marshalText(a any) (text []byte, ok bool, err error) {
	tm, ok := a.(encoding.TextMarshaler)
	if !ok {
		return nil, false, nil
	}
	text, err = tm.MarshalText()
	return text, true, err
}
