package encode

// Keys and values of the general path (see state.go) in each format.

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"time"
)

func (s *state) appendKey(key string) {
	s.buf = append(s.buf, s.sep...)
	s.sep = s.attrSep()
	switch s.c.format {
	case JSON:
		s.buf = append(s.buf, '"')
		s.buf = appendEscapedJSON(s.buf, key)
		s.buf = append(s.buf, '"', ':')
		return
	case Logfmt:
		n := len(s.buf)
		s.buf = append(s.buf, s.prefix...) // sanitized by openGroupLen
		s.buf = appendLogfmtKey(s.buf, key)
		if len(s.buf) == n {
			s.buf = append(s.buf, '_')
		}
	case Console:
		if s.c.color {
			s.buf = append(s.buf, ansiDim...)
		}
		s.buf = appendConsoleKey(s.buf, bytesToString(s.prefix), key)
		if s.c.color {
			s.buf = append(s.buf, '=')
			s.buf = append(s.buf, ansiReset...)
			return
		}
	default:
		s.appendTextKey(key)
	}
	s.buf = append(s.buf, '=')
}

// appendTextKey writes prefix+key the way slog's TextHandler does.
func (s *state) appendTextKey(key string) {
	s.buf = appendTextKey(s.buf, bytesToString(s.prefix), key)
}

// appendString appends a string value in the current format.
func (s *state) appendString(str string) {
	switch s.c.format {
	case JSON:
		s.buf = appendJSONString(s.buf, str)
	case Logfmt:
		s.buf = appendLogfmtValueString(s.buf, str)
	case Console:
		s.buf = appendConsoleString(s.buf, str)
	default:
		s.buf = appendTextValueString(s.buf, str)
	}
}

func (s *state) appendTime(t time.Time) {
	if s.c.json {
		s.buf = appendJSONTime(s.buf, t)
		return
	}
	s.buf = appendRFC3339Millis(s.buf, t)
}

func (s *state) appendValue(v slog.Value) {
	s.appendScalar(v, v.Kind())
}

// appendScalar appends v, whose kind is k (never KindGroup or KindLogValuer).
func (s *state) appendScalar(v slog.Value, k slog.Kind) {
	if k == slog.KindAny {
		s.appendAny(v.Any())
		return
	}
	switch s.c.format {
	case JSON:
		s.buf = appendJSONScalar(s.buf, v, k)
	case Logfmt:
		s.buf = appendTextScalar(s.buf, v, k, true)
	case Console:
		if k == slog.KindString {
			s.buf = appendConsoleString(s.buf, v.String())
		} else {
			s.buf = appendTextScalar(s.buf, v, k, false)
		}
	default:
		s.buf = appendTextScalar(s.buf, v, k, false)
	}
}

// appendAny formats an arbitrary value as slog does, including its
// treatment of panics in user methods.
func (s *state) appendAny(a any) {
	defer func() {
		if r := recover(); r != nil {
			// As slog (adapted from fmt): a panic in a method of a nil
			// pointer prints "<nil>", anything else "!PANIC: ...".
			if v := reflect.ValueOf(a); v.Kind() == reflect.Pointer && v.IsNil() {
				s.appendString("<nil>")
				return
			}
			s.appendString(fmt.Sprintf("!PANIC: %v", r))
		}
	}()
	if s.c.json {
		_, jm := a.(json.Marshaler)
		if err, ok := a.(error); ok && !jm {
			if s.c.preset != nil && s.c.preset.ecsError {
				s.appendECSError(err) // preset.go
				return
			}
			s.appendString(err.Error())
			return
		}
		if err := appendJSONAny(&s.buf, a); err != nil {
			s.appendString(fmt.Sprintf("!ERROR:%v", err))
		}
		return
	}
	if data, ok, err := marshalText(a); ok {
		if err != nil {
			s.appendString(fmt.Sprintf("!ERROR:%v", err))
			return
		}
		s.appendString(string(data))
		return
	}
	// slog's order: its text methods (marshalText), then a byte slice (even
	// one whose named type is an error), then fmt's %+v.
	if bs, ok := byteSlice(a); ok {
		if s.c.format == Logfmt {
			s.appendString(string(bs))
		} else {
			s.buf = strconv.AppendQuote(s.buf, string(bs))
		}
		return
	}
	if err, ok := a.(error); ok {
		// fmt's %+v of an error that is not a fmt.Formatter is exactly its
		// Error() text; calling it directly avoids fmt's allocation. If
		// Error panics, fall through to fmt so its panic text is kept.
		if _, isFormatter := a.(fmt.Formatter); !isFormatter {
			if msg, ok := safeError(err); ok {
				s.appendString(msg)
				return
			}
		}
	}
	var tmp [128]byte
	if text, ok := appendFmtText(tmp[:0], a); ok { // textany.go
		s.appendString(bytesToString(text))
		return
	}
	s.appendString(fmt.Sprintf("%+v", a))
}

// safeError returns err.Error(), or false if it panicked.
func safeError(err error) (msg string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return err.Error(), true
}

func byteSlice(a any) ([]byte, bool) {
	if bs, ok := a.([]byte); ok {
		return bs, true
	}
	t := reflect.TypeOf(a)
	if t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return reflect.ValueOf(a).Bytes(), true
	}
	return nil, false
}
