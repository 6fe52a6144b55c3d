//go:build go1.27

package encode

import "encoding"

// marshalText returns a's text as slog's TextHandler takes it from Go 1.27:
// from encoding.TextAppender, else from encoding.TextMarshaler; ok is false
// when a has neither method.
func marshalText(a any) (text []byte, ok bool, err error) {
	if ta, isAppender := a.(encoding.TextAppender); isAppender {
		text, err = ta.AppendText(nil)
		return text, true, err
	}
	tm, ok := a.(encoding.TextMarshaler)
	if !ok {
		return nil, false, nil
	}
	text, err = tm.MarshalText()
	return text, true, err
}
