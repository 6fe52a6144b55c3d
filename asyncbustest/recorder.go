package asyncbustest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// Recorder is a slog.Handler that keeps every record it is given, at every
// level, for tests to assert on. Handlers derived with WithAttrs and
// WithGroup record into the same Recorder, and their state is applied to
// the records as a handler writes it: WithAttrs attributes first, then the
// record's own, nested under the groups opened by WithGroup. It is safe for
// concurrent use.
type Recorder struct {
	store *recStore
	steps []step // WithAttrs and WithGroup calls, in order
}

// step is one WithAttrs (attrs) or WithGroup (group) call.
type step struct {
	group string
	attrs []slog.Attr
}

type recStore struct {
	mu   sync.Mutex
	recs []Record
}

// Record is one recorded record. Attrs are as a handler would write them:
// LogValuers resolved, empty attributes and empty groups removed, groups
// with an empty key inlined, and the WithAttrs/WithGroup state of the
// handler that recorded it applied.
type Record struct {
	// Time is the record's time, as the logger set it.
	Time time.Time
	// Level is the record's level.
	Level slog.Level
	// Message is the record's message.
	Message string
	// PC is the program counter of the logging call (0 if not recorded).
	PC uintptr
	// Attrs are the attributes as written (see Record).
	Attrs []slog.Attr
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{store: &recStore{}} }

// Enabled reports true: a Recorder records every level.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	var own []slog.Attr
	rec.Attrs(func(a slog.Attr) bool {
		own = append(own, a)
		return true
	})
	out := Record{Time: rec.Time, Level: rec.Level, Message: rec.Message, PC: rec.PC, Attrs: nest(r.steps, clean(own))}
	r.store.mu.Lock()
	r.store.recs = append(r.store.recs, out)
	r.store.mu.Unlock()
	return nil
}

// WithAttrs returns a Recorder whose records carry attrs (resolved now, as
// slog's handlers do).
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	attrs = clean(attrs)
	if len(attrs) == 0 {
		return r
	}
	return &Recorder{store: r.store, steps: append(r.steps[:len(r.steps):len(r.steps)], step{attrs: attrs})}
}

// WithGroup returns a Recorder that nests later attributes under name.
func (r *Recorder) WithGroup(name string) slog.Handler {
	if name == "" {
		return r
	}
	return &Recorder{store: r.store, steps: append(r.steps[:len(r.steps):len(r.steps)], step{group: name})}
}

// nest applies the handler state to a record's attributes.
func nest(steps []step, own []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for i, s := range steps {
		if s.group == "" {
			out = append(out, s.attrs...)
			continue
		}
		if inner := nest(steps[i+1:], own); len(inner) > 0 {
			out = append(out, slog.Attr{Key: s.group, Value: slog.GroupValue(inner...)})
		}
		return out
	}
	return append(out, own...)
}

// clean resolves, drops empty attributes and groups, and inlines groups
// with an empty key, recursively.
func clean(as []slog.Attr) []slog.Attr {
	var out []slog.Attr
	for _, a := range as {
		a.Value = a.Value.Resolve()
		if a.Equal(slog.Attr{}) {
			continue
		}
		if a.Value.Kind() != slog.KindGroup {
			out = append(out, a)
			continue
		}
		inner := clean(a.Value.Group())
		if len(inner) == 0 {
			continue
		}
		if a.Key == "" {
			out = append(out, inner...)
			continue
		}
		out = append(out, slog.Attr{Key: a.Key, Value: slog.GroupValue(inner...)})
	}
	return out
}

// Records returns the records so far, oldest first.
func (r *Recorder) Records() []Record {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	return append([]Record(nil), r.store.recs...)
}

// Len returns how many records were recorded.
func (r *Recorder) Len() int {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	return len(r.store.recs)
}

// Reset forgets the records so far.
func (r *Recorder) Reset() {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	r.store.recs = nil
}

// Match returns the records at level with message msg whose attributes
// include each key-value pair of kv. Keys are dotted group paths
// ("req.status"); values are compared as slog.AnyValue(v).Equal does, so
// 200 matches slog.Int("status", 200), and a time.Duration a Duration.
func (r *Recorder) Match(level slog.Level, msg string, kv ...any) []Record {
	var out []Record
	for _, rec := range r.Records() {
		if rec.Level == level && rec.Message == msg && rec.has(kv) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// Require returns the first record Match finds; when there is none, it
// fails tb at once (FailNow), listing what was recorded.
func (r *Recorder) Require(tb testing.TB, level slog.Level, msg string, kv ...any) Record {
	tb.Helper()
	if m := r.Match(level, msg, kv...); len(m) > 0 {
		return m[0]
	}
	var b strings.Builder
	for _, rec := range r.Records() {
		fmt.Fprintf(&b, "\n\t%s", rec)
		if rec.Level == level && rec.Message == msg {
			fmt.Fprintf(&b, "  <- %v", rec.has(kv))
		}
	}
	tb.Fatalf("asyncbustest: no %v record %q with %v; recorded:%s", level, msg, kv, b.String())
	return Record{}
}

// RequireNone fails tb at once (FailNow) if a record at level with message
// msg was recorded.
func (r *Recorder) RequireNone(tb testing.TB, level slog.Level, msg string) {
	tb.Helper()
	if m := r.Match(level, msg); len(m) > 0 {
		tb.Fatalf("asyncbustest: unexpected %v record %q: %s", level, msg, m[0])
	}
}

// has reports why rec lacks one of the key-value pairs of kv, or nil.
func (rec Record) has(kv []any) error {
	if len(kv)%2 != 0 {
		return fmt.Errorf("odd number of key-value arguments: %d", len(kv))
	}
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return fmt.Errorf("key %v is a %T, not a string", kv[i], kv[i])
		}
		want := slog.AnyValue(kv[i+1])
		got, ok := rec.Value(strings.Split(k, ".")...)
		if !ok {
			return fmt.Errorf("no attribute %q", k)
		}
		if !want.Equal(got) {
			return fmt.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	return nil
}

// Value returns the value at path: group keys, then the attribute key.
// For keys that contain dots, pass the segments separately.
func (rec Record) Value(path ...string) (slog.Value, bool) {
	as := rec.Attrs
	for i, k := range path {
		var found *slog.Attr
		for j := range as {
			if as[j].Key == k {
				found = &as[j] // the last of duplicate keys wins, as when decoding JSON
			}
		}
		if found == nil {
			return slog.Value{}, false
		}
		if i == len(path)-1 {
			return found.Value, true
		}
		if found.Value.Kind() != slog.KindGroup {
			return slog.Value{}, false
		}
		as = found.Value.Group()
	}
	return slog.Value{}, false
}

// Map returns the attributes as nested maps: groups become
// map[string]any, other values their Value.Any().
func (rec Record) Map() map[string]any { return toMap(rec.Attrs) }

func toMap(as []slog.Attr) map[string]any {
	m := make(map[string]any, len(as))
	for _, a := range as {
		if a.Value.Kind() == slog.KindGroup {
			m[a.Key] = toMap(a.Value.Group())
		} else {
			m[a.Key] = a.Value.Any()
		}
	}
	return m
}

// String formats rec as level, quoted message and attributes, for failure
// messages.
func (rec Record) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %q", rec.Level, rec.Message)
	for _, a := range rec.Attrs {
		fmt.Fprintf(&b, " %s", a)
	}
	return b.String()
}

var _ slog.Handler = (*Recorder)(nil)
