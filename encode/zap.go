package encode

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
)

// The zap formats. ZapJSON and ZapConsole write what go.uber.org/zap's
// encoders write when configured the way controller-runtime's
// pkg/log/zap configures them, and what go-logr/zapr hands them: ZapJSON is
// zap's JSON encoder with zap.NewProductionEncoderConfig (keys level, ts,
// logger, caller, msg, stacktrace; lower-case levels; durations as float
// seconds), ZapConsole is zap's console encoder with
// zap.NewDevelopmentEncoderConfig (tab-separated time, capital level,
// logger, caller and message, then the fields as a JSON object with a space
// after ':' and ','; durations as strings; the stack trace on the following
// lines). The time encoding of both is chosen with Format.WithZapTime.
//
// Mapping from slog:
//   - levels are named after the zap level zapr's slog Handle maps them
//     to: Error and above "error", Warn and above "warn", 0 and above
//     "info", -1 "debug", below that zap's numeric name "Level(-2)"
//     ("LEVEL(-2)" in ZapConsole); LevelFatal and above, which zapr never
//     produces, is zap's "fatal" so that a fatal record stays visible;
//   - WithGroup is zap.Namespace: it opens a nested object at once, kept
//     (even empty) until the end of the fields;
//   - Named is zap's Named: the name is the logger column/field;
//   - a last record attribute keyed "stacktrace" with a string value is
//     zap's entry stack: written after the closed namespaces (ZapJSON) or
//     on the lines below (ZapConsole);
//   - attribute values follow zapr's encodeSlog and zap.Any: an empty group
//     and the zero Attr are skipped, a group with an empty key is inlined,
//     an error is its Error() text (plus KEYVerbose when its %+v differs),
//     a fmt.Stringer its String(), a []byte base64, slices of strings,
//     integers, floats and bools zap arrays, anything else encoding/json's
//     output (HTML escaping off); a time attribute uses the format's time
//     encoding;
//   - ReplaceAttr, when set, applies to attributes, with the groups opened
//     by WithGroup, and to the record time (key slog.TimeKey, no groups;
//     a string result is written as the time: custom time layouts), not
//     to the level, logger, caller or message.
//
// Without ReplaceAttr, records whose attributes are scalars (every Kind but
// KindAny, and KindAny values that are nil, errors, Stringers or the
// slices above) are encoded without allocating.
const (
	// ZapJSON is zap's production JSON encoding (see above).
	ZapJSON Format = 0x40 + iota
	// ZapConsole is zap's development console encoding (see above).
	ZapConsole
)

// ZapTime is the time encoding of the zap formats; the names are those of
// zapcore's time encoders and of controller-runtime's --zap-time-encoding
// values.
type ZapTime uint8

const (
	// ZapTimeRFC3339 is "2006-01-02T15:04:05Z07:00" (controller-runtime's default).
	ZapTimeRFC3339 ZapTime = iota
	// ZapTimeRFC3339Nano is time.RFC3339Nano.
	ZapTimeRFC3339Nano
	// ZapTimeISO8601 is "2006-01-02T15:04:05.000Z0700".
	ZapTimeISO8601
	// ZapTimeEpoch is float seconds since the Unix epoch.
	ZapTimeEpoch
	// ZapTimeMillis is float milliseconds since the Unix epoch.
	ZapTimeMillis
	// ZapTimeNanos is integer nanoseconds since the Unix epoch.
	ZapTimeNanos
)

// zapTimeShift places the ZapTime above the format's own byte.
const zapTimeShift = 8

// WithZapTime returns f with the time encoding t when f is ZapJSON or
// ZapConsole (with any time encoding); other formats are returned unchanged.
func (f Format) WithZapTime(t ZapTime) Format {
	if !f.isZap() {
		return f
	}
	return f&0xff | Format(t)<<zapTimeShift
}

// Valid reports whether f is one of the formats: JSON, Text, Logfmt,
// Console, or ZapJSON or ZapConsole with one of the ZapTime encodings.
func (f Format) Valid() bool {
	return (f >= JSON && f <= Console) || f.isZap()
}

func (f Format) isZap() bool {
	b := f & 0xff
	return (b == ZapJSON || b == ZapConsole) && f>>zapTimeShift <= Format(ZapTimeNanos)
}

// fastZap is the Append path of both zap formats.
const fastZap fastPath = 0x40

// zapStackKey is the key of zapr's stack trace, written as the entry stack.
const zapStackKey = "stacktrace"

// zapFmt is the per-format choice, derived from the Format at each call.
type zapFmt struct {
	console bool // ZapConsole: spaced JSON fields, string durations, capital levels
	time    ZapTime
}

func (e *Encoder) zapFmt() zapFmt {
	f := e.c.format
	return zapFmt{console: f&0xff == ZapConsole, time: ZapTime(f >> zapTimeShift)}
}

// prepareZap opens, in pre, the namespaces of the groups added by
// WithGroup since the last derivation (zap.Namespace writes its key at once).
func (e *Encoder) prepareZap() {
	e.fast = fastZap
	if e.nOpenGroups == len(e.groups) {
		return
	}
	z := e.zapFmt()
	p := e.pre
	for _, g := range e.groups[e.nOpenGroups:] {
		p = appendZapKey(p, g, z.console)
		p = append(p, '{')
	}
	e.pre = p
	e.nOpenGroups = len(e.groups)
}

// zapWithAttrs is WithAttrs for the zap formats: the attributes are
// encoded once, after the earlier ones and inside the open namespaces.
func (e *Encoder) zapWithAttrs(attrs []slog.Attr) *Encoder {
	if len(attrs) == 0 {
		return e
	}
	e2 := e.clone() // pre is clipped: appending never writes into e's array
	z := e.zapFmt()
	for _, a := range attrs {
		e2.pre = e2.appendZapAttr(e2.pre, a, z, e2.groups)
	}
	return e2.derived()
}

// zapNamed is Named for the zap formats: named holds the name ready to
// append (escaped and quoted for ZapJSON, raw for ZapConsole, as zap
// writes it).
func (e *Encoder) zapNamed(name string) *Encoder {
	e2 := e.clone()
	e2.named = nil
	if name != "" {
		if e.zapFmt().console {
			e2.named = []byte(name)
		} else {
			e2.named = appendZapString(nil, name)
		}
	}
	return e2.derived()
}

// appendZap writes one record in a zap format.
func (e *Encoder) appendZap(b []byte, r *slog.Record, extra []slog.Attr) []byte {
	z := e.zapFmt()
	var src *srcEntry
	if e.c.addSource {
		src = sourceFor(r.PC)
	}
	if z.console {
		start := len(b)
		if !r.Time.IsZero() {
			b = e.appendZapRecordTime(b, r.Time, z)
		}
		if len(b) > start {
			b = append(b, '\t')
		}
		b = appendZapLevel(b, r.Level, true)
		if len(e.named) > 0 {
			b = append(b, '\t')
			b = append(b, e.named...)
		}
		if src != nil {
			b = append(b, '\t')
			b = append(b, src.short...)
		}
		b = append(b, '\t')
		b = append(b, r.Message...)
		mark := len(b)
		b = append(b, '\t', '{')
		inner := len(b)
		var stack string
		b = e.appendZapFields(b, r, extra, z, &stack)
		if len(b) == inner {
			b = b[:mark]
		} else {
			b = append(b, '}')
		}
		if stack != "" {
			b = append(b, '\n')
			b = append(b, stack...)
		}
		return append(b, '\n')
	}
	b = append(b, `{"level":"`...)
	b = appendZapLevel(b, r.Level, false)
	b = append(b, '"')
	if !r.Time.IsZero() {
		mark := len(b)
		b = append(b, `,"ts":`...)
		if nb := e.appendZapRecordTime(b, r.Time, z); len(nb) > len(b) {
			b = nb
		} else {
			b = b[:mark]
		}
	}
	if len(e.named) > 0 {
		b = append(b, `,"logger":`...)
		b = append(b, e.named...)
	}
	if src != nil {
		b = append(b, `,"caller":`...)
		b = appendZapString(b, src.short)
	}
	b = append(b, `,"msg":`...)
	b = appendZapString(b, r.Message)
	var stack string
	b = e.appendZapFields(b, r, extra, z, &stack)
	if stack != "" {
		b = append(b, `,"stacktrace":`...)
		b = appendZapString(b, stack)
	}
	return append(b, '}', '\n')
}

// appendZapRecordTime writes the record time with z's time encoder or,
// when ReplaceAttr is set, as ReplaceAttr(nil, slog.Time(slog.TimeKey, t))
// decides: an empty key removes it, a time is encoded with z's encoder,
// anything else is written as its string (quoted in ZapJSON). That is how
// a custom time layout reaches the zap formats.
func (e *Encoder) appendZapRecordTime(b []byte, t time.Time, z zapFmt) []byte {
	if e.c.rep == nil {
		return appendZapTime(b, t, z)
	}
	a := e.c.rep(nil, slog.Time(slog.TimeKey, t))
	v := a.Value.Resolve()
	switch {
	case a.Key == "":
		return b
	case v.Kind() == slog.KindTime:
		return appendZapTime(b, v.Time(), z)
	case z.console:
		return append(b, v.String()...)
	default:
		return appendZapString(b, v.String())
	}
}

// appendZapFields writes extra, the WithAttrs/WithGroup state and the
// record's attributes, then closes the open namespaces. A last attribute
// keyed "stacktrace" with a string value is not written but returned in
// *stack.
func (e *Encoder) appendZapFields(b []byte, r *slog.Record, extra []slog.Attr, z zapFmt, stack *string) []byte {
	for _, a := range extra {
		b = e.appendZapAttr(b, a, z, nil)
	}
	if len(e.pre) > 0 {
		b = appendZapSep(b, z.console)
		b = append(b, e.pre...)
	}
	if front, back, ok := recordAttrs(r); ok {
		// The stack, if any, is the record's last attribute.
		if len(back) > 0 {
			b = e.appendZapAttrs(b, front, z, nil)
			b = e.appendZapAttrs(b, back, z, stack)
		} else {
			b = e.appendZapAttrs(b, front, z, stack)
		}
	} else {
		last := r.NumAttrs() - 1
		i := 0
		r.Attrs(func(a slog.Attr) bool {
			if i == last && isZapStack(a) {
				*stack = a.Value.String()
				return false
			}
			i++
			b = e.appendZapAttr(b, a, z, e.groups)
			return true
		})
	}
	for range e.nOpenGroups {
		b = append(b, '}')
	}
	return b
}

// appendZapAttrs writes as; with stack non-nil, a stack trace attribute
// at the end of as is not written but stored in *stack.
func (e *Encoder) appendZapAttrs(b []byte, as []slog.Attr, z zapFmt, stack *string) []byte {
	if n := len(as); stack != nil && n > 0 && isZapStack(as[n-1]) {
		*stack = as[n-1].Value.String()
		as = as[:n-1]
	}
	for i := range as {
		b = e.appendZapAttr(b, as[i], z, e.groups)
	}
	return b
}

// isZapStack reports whether a is the stack trace attribute that the
// logr bridge appends to a record.
func isZapStack(a slog.Attr) bool {
	return a.Key == zapStackKey && a.Value.Kind() == slog.KindString
}

// appendZapAttr writes one attribute as zapr's encodeSlog hands it to zap.
func (e *Encoder) appendZapAttr(b []byte, a slog.Attr, z zapFmt, groups []string) []byte {
	if e.c.rep != nil && a.Value.Kind() != slog.KindGroup {
		a = e.c.rep(groups, a)
	}
	v := a.Value
	k := v.Kind()
	if k == slog.KindLogValuer {
		v = v.Resolve()
		k = v.Kind()
	}
	switch k {
	case slog.KindGroup:
		as := v.Group()
		if a.Key == "" {
			for _, g := range as {
				b = e.appendZapAttr(b, g, z, groups)
			}
			return b
		}
		if len(as) == 0 {
			return b
		}
		if e.c.rep != nil {
			groups = append(groups[:len(groups):len(groups)], a.Key)
		}
		b = appendZapKey(b, a.Key, z.console)
		b = append(b, '{')
		for _, g := range as {
			b = e.appendZapAttr(b, g, z, groups)
		}
		return append(b, '}')
	case slog.KindAny:
		if a.Key == "" && v.Any() == nil { // the zero Attr
			return b
		}
		return appendZapAny(b, a.Key, v.Any(), z)
	}
	b = appendZapKey(b, a.Key, z.console)
	switch k {
	case slog.KindString:
		return appendZapString(b, v.String())
	case slog.KindInt64:
		return appendInt(b, v.Int64())
	case slog.KindUint64:
		return appendUint(b, v.Uint64())
	case slog.KindBool:
		return appendBool(b, v.Bool())
	case slog.KindFloat64:
		return appendZapFloat(b, v.Float64())
	case slog.KindDuration:
		if z.console { // StringDurationEncoder
			b = append(b, '"')
			b = appendDuration(b, v.Duration())
			return append(b, '"')
		}
		return appendZapFloat(b, float64(v.Duration())/float64(time.Second)) // SecondsDurationEncoder
	default: // slog.KindTime
		return appendZapTime(b, v.Time(), zapFmt{time: z.time})
	}
}

// appendZapAny writes key and x the way zap.Any does for the types zapr
// passes it.
func appendZapAny(b []byte, key string, x any, z zapFmt) []byte {
	switch v := x.(type) {
	case nil:
		b = appendZapKey(b, key, z.console)
		return append(b, "null"...)
	case error:
		return appendZapError(b, key, v, z)
	case fmt.Stringer:
		s, err := zapStringer(v)
		if err != "" {
			return appendZapStringField(b, key+"Error", err, z)
		}
		return appendZapStringField(b, key, s, z)
	case []byte:
		b = appendZapKey(b, key, z.console)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"')
	case []string:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendZapString)
	case []int:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i int) []byte { return appendInt(b, int64(i)) })
	case []int64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendInt)
	case []int32:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i int32) []byte { return appendInt(b, int64(i)) })
	case []uint:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i uint) []byte { return appendUint(b, uint64(i)) })
	case []uint64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendUint)
	case []uint32:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, func(b []byte, i uint32) []byte { return appendUint(b, uint64(i)) })
	case []float64:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendZapFloat)
	case []bool:
		b = appendZapKey(b, key, z.console)
		return appendZapArray(b, v, z, appendBool)
	}
	// zap.Reflect: encoding/json with HTML escaping off; on failure zap
	// writes KEYError instead of the field.
	mark := len(b)
	b = appendZapKey(b, key, z.console)
	if err := appendZapReflected(&b, x); err != "" {
		return appendZapStringField(b[:mark], key+"Error", err, z)
	}
	return b
}

// appendZapReflected is appendJSONMarshal with a panic caught and reported
// as an error text.
func appendZapReflected(b *[]byte, x any) (errText string) {
	n := len(*b)
	defer func() {
		if r := recover(); r != nil {
			*b = (*b)[:n]
			errText = fmt.Sprintf("PANIC=%v", r)
		}
	}()
	if err := appendJSONMarshal(b, x); err != nil {
		*b = (*b)[:n]
		return err.Error()
	}
	return ""
}

// appendZapError is zap.NamedError's encoding: the Error() text, and
// KEYVerbose with the %+v text when the error is a fmt.Formatter that adds
// to it. (zap also writes KEYCauses for multierr-style groups; zapr's
// users rarely pass those and they are written as their text here.)
func appendZapError(b []byte, key string, err error, z zapFmt) []byte {
	msg, ok := zapErrorText(err)
	if !ok {
		return appendZapStringField(b, key+"Error", msg, z)
	}
	b = appendZapStringField(b, key, msg, z)
	if _, isFormatter := err.(fmt.Formatter); isFormatter {
		if verbose := fmt.Sprintf("%+v", err); verbose != msg {
			b = appendZapStringField(b, key+"Verbose", verbose, z)
		}
	}
	return b
}

// zapErrorText is err.Error() as zap's encodeError calls it: a panic from
// a nil pointer is "<nil>", any other panic "PANIC=..." reported as not ok.
func zapErrorText(err error) (msg string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(err); v.Kind() == reflect.Pointer && v.IsNil() {
				msg, ok = "<nil>", true
				return
			}
			msg, ok = fmt.Sprintf("PANIC=%v", r), false
		}
	}()
	return err.Error(), true
}

// zapStringer is String() as zap's encodeStringer calls it; errText is set
// when it panicked (other than on a nil pointer, which gives "<nil>").
func zapStringer(s fmt.Stringer) (str, errText string) {
	defer func() {
		if r := recover(); r != nil {
			if v := reflect.ValueOf(s); v.Kind() == reflect.Pointer && v.IsNil() {
				str, errText = "<nil>", ""
				return
			}
			str, errText = "", fmt.Sprintf("PANIC=%v", r)
		}
	}()
	return s.String(), ""
}

func appendZapStringField(b []byte, key, s string, z zapFmt) []byte {
	b = appendZapKey(b, key, z.console)
	return appendZapString(b, s)
}

// appendZapArray writes a zap array: elements separated by "," (", " in
// the console encoding).
func appendZapArray[T any](b []byte, s []T, z zapFmt, elem func([]byte, T) []byte) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
			if z.console {
				b = append(b, ' ')
			}
		}
		b = elem(b, v)
	}
	return append(b, ']')
}

// appendZapSep is zap's addElementSeparator: a ',' (and a space when
// spaced) unless b is empty or ends with an opening or a separator.
func appendZapSep(b []byte, spaced bool) []byte {
	if len(b) == 0 {
		return b
	}
	switch b[len(b)-1] {
	case '{', '[', ':', ',', ' ':
		return b
	}
	if spaced {
		return append(b, ',', ' ')
	}
	return append(b, ',')
}

// appendZapKey writes the separator, the quoted key and ':' (": " when
// spaced), as zap's addKey.
func appendZapKey(b []byte, key string, spaced bool) []byte {
	b = appendZapSep(b, spaced)
	b = appendZapString(b, key)
	if spaced {
		return append(b, ':', ' ')
	}
	return append(b, ':')
}

// appendZapString writes s quoted and escaped as zap's JSON encoder does.
func appendZapString(b []byte, s string) []byte {
	b = append(b, '"')
	if jsonClean(s) { // printable ASCII without '"' and '\\': zap copies it too
		b = append(b, s...)
	} else {
		b = appendZapEscaped(b, s)
	}
	return append(b, '"')
}

// appendZapEscaped escapes s like zap's safeAddString: '\\' and '"'
// backslashed, \n \r \t, other bytes below 0x20 as \u00XX, each byte of
// invalid UTF-8 as \ufffd; everything else (0x7f, U+2028, '<') is copied.
func appendZapEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '\\' && c != '"' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// appendZapFloat is zap's JSON float: shortest 'f' formatting, NaN and the
// infinities as the strings "NaN", "+Inf" and "-Inf".
func appendZapFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendZapTime writes t with z's time encoder: as a JSON value, or, for
// the console's time column (z.console), as fmt.Fprint prints the value
// the encoder produced (strings unquoted, floats in %v form).
func appendZapTime(b []byte, t time.Time, z zapFmt) []byte {
	switch z.time {
	case ZapTimeEpoch, ZapTimeMillis:
		unit := float64(time.Second)
		if z.time == ZapTimeMillis {
			unit = float64(time.Millisecond)
		}
		f := float64(t.UnixNano()) / unit
		if z.console {
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
		return appendZapFloat(b, f)
	case ZapTimeNanos:
		return appendInt(b, t.UnixNano())
	}
	if !z.console {
		b = append(b, '"')
	}
	var tmp secStamp
	c := stamp(t, &tmp)
	switch {
	case c == nil: // a year outside [0,9999] or an offset of 100 h or more: let package time format it
		layout := time.RFC3339
		switch z.time {
		case ZapTimeRFC3339Nano:
			layout = time.RFC3339Nano
		case ZapTimeISO8601:
			layout = "2006-01-02T15:04:05.000Z0700"
		}
		b = t.AppendFormat(b, layout)
	case z.time == ZapTimeISO8601:
		b = append(b, c.date()...)
		b = appendMillis(b, t)
		if c.zlen == 6 { // "+07:00" becomes "+0700"
			b = append(b, c.zoneq[:3]...)
			b = append(b, c.zoneq[4:6]...)
		} else {
			b = append(b, c.zoneq[:c.zlen]...)
		}
	default:
		b = append(b, c.date()...)
		if z.time == ZapTimeRFC3339Nano {
			b = appendNanos(b, t.Nanosecond())
		}
		b = append(b, c.zoneq[:c.zlen]...)
	}
	if !z.console {
		b = append(b, '"')
	}
	return b
}

// appendZapLevel writes l's zap name (lower case, or capital for the
// console encoding), mapping slog levels as zapr's Handle does.
func appendZapLevel(b []byte, l slog.Level, capital bool) []byte {
	var name string
	switch {
	case l >= LevelFatal:
		name = "fatal"
	case l >= slog.LevelError:
		name = "error"
	case l >= slog.LevelWarn:
		name = "warn"
	case l >= 0:
		name = "info"
	case l == -1:
		name = "debug"
	default:
		// zapcore.Level is an int8; zapr caps V levels at 127.
		n := max(int64(l), -127)
		if capital {
			b = append(b, "LEVEL("...)
		} else {
			b = append(b, "Level("...)
		}
		b = appendInt(b, n)
		return append(b, ')')
	}
	if !capital {
		return append(b, name...)
	}
	for i := 0; i < len(name); i++ {
		b = append(b, name[i]-'a'+'A')
	}
	return b
}
