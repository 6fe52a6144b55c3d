package otelbridge

import (
	"context"
	"encoding/hex"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/asyncbus/asyncbus"
)

// Keys of the fields the bridge adds to each converted record.
const (
	KeyBody              = "body"               // a body that is not a string
	KeySeverityText      = "severity_text"      // the severity text, when set
	KeyEventName         = "event_name"         // the event name, when set
	KeyTraceID           = "trace_id"           // 32 lowercase hex digits (also StyleOTel)
	KeySpanID            = "span_id"            // 16 lowercase hex digits (also StyleOTel)
	KeyTraceFlags        = "trace_flags"        // 2 lowercase hex digits (also StyleOTel)
	KeyObservedTimestamp = "observed_timestamp" // when the SDK observed the record
	KeyDroppedAttributes = "dropped_attributes" // attributes the SDK dropped at its limits
	KeyScope             = "scope"              // the instrumentation scope group
	KeyResource          = "resource"           // the resource attributes group
)

// DefaultMaxDepth is the default nesting limit for map and slice values.
const DefaultMaxDepth = 16

// emptyKey replaces an empty attribute key, which slog would otherwise inline
// (groups) or write as an unnamed field.
const emptyKey = "_"

// maxCached bounds the scope and resource caches so that a program creating
// unbounded scopes cannot grow them without limit; beyond it values are
// rebuilt per record (correct, just slower).
const maxCached = 256

// Option configures a [Processor] or an [Exporter].
type Option func(*config)

type config struct {
	scope    bool
	resource bool
	maxDepth int
}

// WithScope says whether the instrumentation scope is written as a "scope"
// group (name, version, schema_url, attributes). Default true.
func WithScope(on bool) Option { return func(c *config) { c.scope = on } }

// WithResource says whether the resource attributes are written as a
// "resource" group. Default false: the resource is the same on every line of a
// process and usually belongs in the collector, not in each line.
func WithResource(on bool) Option { return func(c *config) { c.resource = on } }

// WithMaxDepth sets how deeply map and slice values may nest before the rest
// of the value is written as its OpenTelemetry string form. Values below 1
// select [DefaultMaxDepth].
func WithMaxDepth(n int) Option {
	return func(c *config) {
		if n < 1 {
			n = DefaultMaxDepth
		}
		c.maxDepth = n
	}
}

// converter turns SDK records into slog records. It is safe for concurrent
// use: its only mutable state is the copy-on-write caches.
type converter struct {
	cfg       config
	scopes    cowCache[scopeKey]
	resources cowCache[*resource.Resource]
}

func newConverter(opts []Option) *converter {
	c := &converter{cfg: config{scope: true, maxDepth: DefaultMaxDepth}}
	for _, o := range opts {
		if o != nil {
			o(&c.cfg)
		}
	}
	return c
}

// level maps an OpenTelemetry severity to a slog level: the inverse of the
// otelslog bridge (severity = level + 9). An undefined severity is INFO.
func level(s log.Severity) slog.Level {
	if s == log.SeverityUndefined {
		return slog.LevelInfo
	}
	return slog.Level(int(s) - 9)
}

// inlineAttrs is the stack buffer size for one record's attributes; records
// with more spill to the heap once.
const inlineAttrs = 16

// attrBufs holds the attribute buffers of records handed to an asyncbus
// handler (see handle).
var attrBufs = sync.Pool{New: func() any { return new([inlineAttrs]slog.Attr) }}

// convert builds the slog record for r. The result shares no memory with r
// that r may later mutate (strings and attribute values are immutable).
func (c *converter) convert(r *sdklog.Record) slog.Record {
	var buf [inlineAttrs]slog.Attr
	t, lvl, msg, attrs := c.fill(r, buf[:0])
	rec := slog.NewRecord(t, lvl, msg, 0)
	rec.AddAttrs(attrs...)
	return rec
}

// handle converts r and hands it to h. An asyncbus handler takes the
// attributes straight from a buffer (Handler.HandleAttrs), which avoids
// the allocation a slog.Record makes for more than five attributes.
func (c *converter) handle(ctx context.Context, h slog.Handler, r *sdklog.Record) error {
	ah, isAsyncbus := h.(*asyncbus.Handler)
	if !isAsyncbus || !ah.Grouped() {
		// The record's ids land at the top level, where the TraceContext
		// hook would write the context's: the hook stands down. In a group
		// they cannot collide with the hook's top-level fields, which stay.
		ctx = markOwnTrace(ctx, r)
	}
	if isAsyncbus {
		// A pooled buffer, not one on the stack: should escape analysis
		// ever see attrs leak from HandleAttrs (an encoder behind an
		// interface keeps it), a stack buffer would move to the heap.
		buf := attrBufs.Get().(*[inlineAttrs]slog.Attr)
		t, lvl, msg, attrs := c.fill(r, buf[:0])
		err := ah.HandleAttrs(ctx, t, lvl, msg, attrs)
		clear(buf[:]) // drop the references the record's attributes held
		attrBufs.Put(buf)
		return err
	}
	return h.Handle(ctx, c.convert(r))
}

// fill appends r's attributes to attrs and returns the record's time,
// level and message with them.
func (c *converter) fill(r *sdklog.Record, attrs []slog.Attr) (time.Time, slog.Level, string, []slog.Attr) {
	t := r.Timestamp()
	if t.IsZero() {
		t = r.ObservedTimestamp()
	}
	body := r.Body()
	var msg string
	if body.Type() == attribute.STRING {
		msg = body.AsString()
	}
	if st := r.SeverityText(); st != "" {
		attrs = append(attrs, slog.String(KeySeverityText, st))
	}
	if en := r.EventName(); en != "" {
		attrs = append(attrs, slog.String(KeyEventName, en))
	}
	if tid, sid := r.TraceID(), r.SpanID(); tid.IsValid() || sid.IsValid() {
		// One allocation holds both hex strings.
		var hx [48]byte
		hex.Encode(hx[:32], tid[:])
		hex.Encode(hx[32:], sid[:])
		s := string(hx[:])
		if tid.IsValid() {
			attrs = append(attrs, slog.String(KeyTraceID, s[:32]))
		}
		if sid.IsValid() {
			attrs = append(attrs, slog.String(KeySpanID, s[32:]))
		}
		if tid.IsValid() && sid.IsValid() {
			attrs = append(attrs, slog.String(KeyTraceFlags, flagsHex[r.TraceFlags()]))
		}
	}
	if body.Type() != attribute.STRING && body.Type() != attribute.EMPTY {
		attrs = append(attrs, slog.Attr{Key: KeyBody, Value: c.value(body, 0)})
	}
	// A plain loop over the SDK iterator keeps attrs on the stack: the
	// callback does not escape (WalkAttributes only calls it).
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		attrs = append(attrs, slog.Attr{Key: key(string(kv.Key)), Value: c.value(kv.Value, 0)})
		return true
	})
	if ot := r.ObservedTimestamp(); !ot.IsZero() {
		attrs = append(attrs, slog.Time(KeyObservedTimestamp, ot))
	}
	if d := r.DroppedAttributes(); d > 0 {
		attrs = append(attrs, slog.Int(KeyDroppedAttributes, d))
	}
	if c.cfg.scope {
		if v, ok := c.scopeValue(r.InstrumentationScope()); ok {
			attrs = append(attrs, slog.Attr{Key: KeyScope, Value: v})
		}
	}
	if c.cfg.resource {
		if v, ok := c.resourceValue(r.Resource()); ok {
			attrs = append(attrs, slog.Attr{Key: KeyResource, Value: v})
		}
	}
	return t, level(r.Severity()), msg, attrs
}

// flagsHex holds the two-digit lowercase hex form of every trace-flags byte,
// so writing trace_flags never allocates.
var flagsHex = func() (t [256]string) {
	for i := range t {
		t[i] = hex.EncodeToString([]byte{byte(i)})
	}
	return t
}()

func key(k string) string {
	if k == "" {
		return emptyKey
	}
	return k
}

// value converts an OpenTelemetry value at nesting depth d.
func (c *converter) value(v attribute.Value, d int) slog.Value {
	switch v.Type() {
	case attribute.BOOL:
		return slog.BoolValue(v.AsBool())
	case attribute.INT64:
		return slog.Int64Value(v.AsInt64())
	case attribute.FLOAT64:
		return floatValue(v.AsFloat64())
	case attribute.STRING:
		return slog.StringValue(v.AsString())
	case attribute.EMPTY:
		return slog.AnyValue(nil)
	case attribute.BYTESLICE:
		return slog.AnyValue(v.AsByteSlice())
	case attribute.BOOLSLICE:
		return slog.AnyValue(v.AsBoolSlice())
	case attribute.INT64SLICE:
		return slog.AnyValue(v.AsInt64Slice())
	case attribute.STRINGSLICE:
		return slog.AnyValue(v.AsStringSlice())
	case attribute.FLOAT64SLICE:
		fs := v.AsFloat64Slice()
		for _, f := range fs {
			if !finite(f) {
				return slog.AnyValue(c.native(v, d))
			}
		}
		return slog.AnyValue(fs)
	case attribute.SLICE, attribute.MAP:
		if d >= c.cfg.maxDepth {
			return slog.StringValue(v.String())
		}
		if v.Type() == attribute.SLICE {
			return slog.AnyValue(c.native(v, d))
		}
		kvs := v.AsMap()
		if len(kvs) == 0 {
			// slog drops an empty group with its key; a map value keeps the
			// key the application set, written as {} (map[] in Text, Logfmt
			// and Console, as slog's TextHandler writes an empty map).
			return slog.AnyValue(map[string]any{}) // one each: a handler may write into it
		}
		as := make([]slog.Attr, len(kvs))
		for i, kv := range kvs {
			as[i] = slog.Attr{Key: key(string(kv.Key)), Value: c.value(kv.Value, d+1)}
		}
		return slog.GroupValue(as...)
	default:
		return slog.StringValue(v.String())
	}
}

// native converts v into plain Go values (used inside arrays, where slog
// groups cannot appear): maps become map[string]any, slices []any.
func (c *converter) native(v attribute.Value, d int) any {
	switch v.Type() {
	case attribute.BOOL:
		return v.AsBool()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return floatNative(v.AsFloat64())
	case attribute.STRING:
		return v.AsString()
	case attribute.EMPTY:
		return nil
	case attribute.BYTESLICE:
		return v.AsByteSlice()
	case attribute.BOOLSLICE:
		return v.AsBoolSlice()
	case attribute.INT64SLICE:
		return v.AsInt64Slice()
	case attribute.STRINGSLICE:
		return v.AsStringSlice()
	case attribute.FLOAT64SLICE:
		fs := v.AsFloat64Slice()
		out := make([]any, len(fs))
		for i, f := range fs {
			out[i] = floatNative(f)
		}
		return out
	case attribute.SLICE:
		if d >= c.cfg.maxDepth {
			return v.String()
		}
		vs := v.AsSlice()
		out := make([]any, len(vs))
		for i, e := range vs {
			out[i] = c.native(e, d+1)
		}
		return out
	case attribute.MAP:
		if d >= c.cfg.maxDepth {
			return v.String()
		}
		kvs := v.AsMap()
		out := make(map[string]any, len(kvs))
		for _, kv := range kvs {
			out[key(string(kv.Key))] = c.native(kv.Value, d+1)
		}
		return out
	default:
		return v.String()
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// floatValue writes NaN and ±Inf as strings: JSON has no form for them.
func floatValue(f float64) slog.Value {
	if finite(f) {
		return slog.Float64Value(f)
	}
	return slog.StringValue(floatNative(f).(string))
}

func floatNative(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return f
}

// scopeKey identifies an instrumentation scope. Distinct is the SDK's map key
// for attribute sets.
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

func (c *converter) scopeValue(s instrumentation.Scope) (slog.Value, bool) {
	if s.Name == "" && s.Version == "" && s.SchemaURL == "" && s.Attributes.Len() == 0 {
		return slog.Value{}, false
	}
	k := scopeKey{s.Name, s.Version, s.SchemaURL, s.Attributes.Equivalent()}
	if v, ok := c.scopes.get(k); ok {
		return v, true
	}
	as := make([]slog.Attr, 0, 4)
	as = append(as, slog.String("name", s.Name))
	if s.Version != "" {
		as = append(as, slog.String("version", s.Version))
	}
	if s.SchemaURL != "" {
		as = append(as, slog.String("schema_url", s.SchemaURL))
	}
	if s.Attributes.Len() > 0 {
		as = append(as, slog.Attr{Key: "attributes", Value: c.group(s.Attributes.ToSlice())})
	}
	v := slog.GroupValue(as...)
	c.scopes.put(k, v)
	return v, true
}

func (c *converter) resourceValue(r *resource.Resource) (slog.Value, bool) {
	if r == nil || r.Len() == 0 {
		return slog.Value{}, false
	}
	if v, ok := c.resources.get(r); ok {
		return v, true
	}
	v := c.group(r.Attributes())
	c.resources.put(r, v)
	return v, true
}

func (c *converter) group(kvs []attribute.KeyValue) slog.Value {
	as := make([]slog.Attr, len(kvs))
	for i, kv := range kvs {
		as[i] = slog.Attr{Key: key(string(kv.Key)), Value: c.value(kv.Value, 1)}
	}
	return slog.GroupValue(as...)
}

// cowCache is a copy-on-write map: lookups are one atomic load and a map
// read, with no lock; inserts copy the map under mu. The stored slog.Values
// are immutable, so sharing them between records and goroutines is safe.
type cowCache[K comparable] struct {
	mu sync.Mutex
	// m is published with an atomic store after the new map is fully built,
	// so a reader that loads it sees a complete, never-mutated map.
	m atomic.Pointer[map[K]slog.Value]
}

func (c *cowCache[K]) get(k K) (slog.Value, bool) {
	if p := c.m.Load(); p != nil {
		v, ok := (*p)[k]
		return v, ok
	}
	return slog.Value{}, false
}

func (c *cowCache[K]) put(k K, v slog.Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= maxCached {
		return
	}
	m := make(map[K]slog.Value, n+1)
	if old != nil {
		for k2, v2 := range *old {
			m[k2] = v2
		}
	}
	m[k] = v
	c.m.Store(&m)
}
