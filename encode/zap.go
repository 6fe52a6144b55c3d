package encode

import (
	"log/slog"
	"time"
)

// The zap formats. ZapJSON and ZapConsole write what go.uber.org/zap's
// encoders write when configured the way controller-runtime's
// pkg/log/zap configures them, for the entries zap's slog handler or (with
// Format.WithLogrLevels) go-logr/zapr hands them: ZapJSON is
// zap's JSON encoder with zap.NewProductionEncoderConfig (keys level, ts,
// logger, caller, msg, stacktrace; lower-case levels; durations as float
// seconds), ZapConsole is zap's console encoder with
// zap.NewDevelopmentEncoderConfig (tab-separated time, capital level,
// logger, caller and message, then the fields as a JSON object with a space
// after ':' and ','; durations as strings; the stack trace on the following
// lines). The time encoding of both is chosen with Format.WithZapTime.
//
// Mapping from slog:
//   - levels are named after the zap level zap's own slog handler (zapslog)
//     maps them to: Error and above "error", Warn and above "warn", Info
//     and above "info", below Info "debug"; LevelFatal and above is zap's
//     "fatal" so that a fatal record stays visible; Format.WithZapLevels
//     names Error+1 "dpanic" and Error+2 and +3 "panic"; Format.WithLogrLevels
//     names the levels below Info as go-logr/zapr does for logr's V levels
//     (slog level -n is V(n)): -1 "debug", below that zap's numeric name
//     "Level(-2)" ("LEVEL(-2)" in ZapConsole), down to "Level(-127)";
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

// zapLevelsBit, above the ZapTime byte, is set by WithZapLevels.
const zapLevelsBit Format = 1 << 16

// zapLogrBit, above zapLevelsBit, is set by WithLogrLevels.
const zapLogrBit Format = 1 << 17

// zapLevelBits are the level-naming bits a zap format may carry.
const zapLevelBits = zapLevelsBit | zapLogrBit

// WithZapTime returns f with the time encoding t when f is ZapJSON or
// ZapConsole (with any time encoding); other formats are returned unchanged.
func (f Format) WithZapTime(t ZapTime) Format {
	if !f.isZap() {
		return f
	}
	return f&(0xff|zapLevelBits) | Format(t)<<zapTimeShift
}

// WithZapLevels returns f, when it is ZapJSON or ZapConsole, naming the
// levels between Error and LevelFatal after zap's own levels: Error+1
// "dpanic" and Error+2 and Error+3 "panic" (zap's DPanicLevel and
// PanicLevel), instead of "error" as zapr's slog handler names every level
// from Error up. Other formats are returned unchanged. The
// controller-runtime drop-in sets it for the DPanic lines it writes where
// zapr does; it maps records that arrive through slog as zapr does itself.
func (f Format) WithZapLevels() Format {
	if !f.isZap() {
		return f
	}
	return f | zapLevelsBit
}

// WithLogrLevels returns f, when it is ZapJSON or ZapConsole, naming the
// levels below Info as go-logr/zapr names logr's V levels (slog level -n
// is V(n)): -1 "debug", lower ones zap's numeric name "Level(-n)", down to
// "Level(-127)", instead of "debug" for every level below Info. Other
// formats are returned unchanged. The controller-runtime drop-in sets it;
// set it for a handler that serves logr's V levels through zapr's mapping
// (logrbridge.Zapr) and should write what zapr and zap write.
func (f Format) WithLogrLevels() Format {
	if !f.isZap() {
		return f
	}
	return f | zapLogrBit
}

// Valid reports whether f is one of the formats: JSON, Text, Logfmt,
// Console, a cloud preset (GCPJSON, ECSJSON, DatadogJSON), or ZapJSON or
// ZapConsole with one of the ZapTime encodings.
func (f Format) Valid() bool {
	return (f >= JSON && f <= Console) || f.isZap() || f.isPreset()
}

func (f Format) isZap() bool {
	b := f & 0xff
	return (b == ZapJSON || b == ZapConsole) && (f&^zapLevelBits)>>zapTimeShift <= Format(ZapTimeNanos)
}

// fastZap is the Append path of both zap formats.
const fastZap fastPath = 0x40

// zapStackKey is the key of zapr's stack trace, written as the entry stack.
const zapStackKey = "stacktrace"

// zapFmt is the per-format choice, derived from the Format at each call.
type zapFmt struct {
	console bool // ZapConsole: spaced JSON fields, string durations, capital levels
	time    ZapTime
	levels  bool // WithZapLevels: "dpanic" and "panic" above "error"
	logr    bool // WithLogrLevels: zapr's names for logr's V levels below Info
}

func (e *Encoder) zapFmt() zapFmt {
	f := e.c.format
	return zapFmt{console: f&0xff == ZapConsole, time: ZapTime(f >> zapTimeShift & 0xff), levels: f&zapLevelsBit != 0, logr: f&zapLogrBit != 0}
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
	bud := newBudget(len(e2.pre))
	for _, a := range attrs {
		e2.pre = e2.appendZapAttr(e2.pre, a, z, e2.groups, &bud, 0)
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
		b = appendZapLevel(b, r.Level, z)
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
	b = appendZapLevel(b, r.Level, z)
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
	bud := newBudget(len(b))
	for _, a := range extra {
		b = e.appendZapAttr(b, a, z, nil, &bud, 0)
	}
	if len(e.pre) > 0 {
		b = appendZapSep(b, z.console)
		b = append(b, e.pre...)
	}
	if front, back, ok := recordAttrs(r); ok {
		// The stack, if any, is the record's last attribute.
		if len(back) > 0 {
			b = e.appendZapAttrs(b, front, z, nil, &bud)
			b = e.appendZapAttrs(b, back, z, stack, &bud)
		} else {
			b = e.appendZapAttrs(b, front, z, stack, &bud)
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
			b = e.appendZapAttr(b, a, z, e.groups, &bud, 0)
			return !bud.truncated
		})
	}
	for range e.nOpenGroups {
		b = append(b, '}')
	}
	return b
}

// appendZapAttrs writes as; with stack non-nil, a stack trace attribute
// at the end of as is not written but stored in *stack.
func (e *Encoder) appendZapAttrs(b []byte, as []slog.Attr, z zapFmt, stack *string, bud *budget) []byte {
	if n := len(as); stack != nil && n > 0 && isZapStack(as[n-1]) {
		*stack = as[n-1].Value.String()
		as = as[:n-1]
	}
	for i := range as {
		b = e.appendZapAttr(b, as[i], z, e.groups, bud, 0)
	}
	return b
}

// isZapStack reports whether a is the stack trace attribute that the
// logr bridge appends to a record.
func isZapStack(a slog.Attr) bool {
	return a.Key == zapStackKey && a.Value.Kind() == slog.KindString
}
