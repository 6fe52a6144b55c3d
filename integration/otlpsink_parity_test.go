package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/bridges/otelslog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/otlpsink"
)

// parityReceiver is an OTLP/HTTP logs endpoint keeping each request's
// resource, scope and records, decoded by the official protobuf types.
type parityReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	resource [][]*commonpb.KeyValue
	scopes   []*commonpb.InstrumentationScope
	recs     []*logspb.LogRecord
	errs     []error
}

func newParityReceiver(t *testing.T) *parityReceiver {
	rc := &parityReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var req collogspb.ExportLogsServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil {
			rc.errs = append(rc.errs, err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rl := range req.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				for _, lr := range sl.GetLogRecords() {
					rc.resource = append(rc.resource, rl.GetResource().GetAttributes())
					rc.scopes = append(rc.scopes, sl.GetScope())
					rc.recs = append(rc.recs, lr)
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// paritySeed is OTLP_PARITY_SEED if set (to replay a failure), else new.
func paritySeed(t *testing.T) uint64 {
	if s := os.Getenv("OTLP_PARITY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		return v
	}
	return uint64(time.Now().UnixNano())
}

// TestOTLPSinkMatchesOtelslogAndSDK logs the same random records (every
// slog kind, groups, WithAttrs/WithGroup chains, span contexts) through
// otlpsink and through otelslog → sdk/log → otlploghttp into two
// receivers, and compares the decoded LogRecords field by field. The only
// differences accepted are those the otlpsink package doc lists (see
// normalize and sameValue); the seed is printed on failure.
func TestOTLPSinkMatchesOtelslogAndSDK(t *testing.T) {
	seed := paritySeed(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with OTLP_PARITY_SEED=%d", seed)
		}
	})
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ctx := context.Background()

	ours, theirs := newParityReceiver(t), newParityReceiver(t)
	sink, err := otlpsink.NewHandler(otlpsink.Options{
		Endpoint: ours.srv.URL, Resource: []slog.Attr{slog.String("service.name", "parity")},
		ScopeName: "parity", ScopeVersion: "1.0.0", Compression: "none", Headers: map[string]string{},
	}, &asyncbus.Options{Level: slog.Level(-100), OnError: func(err error) { t.Error(err) }})
	require.NoError(t, err)
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(theirs.srv.URL+"/v1/logs"))
	require.NoError(t, err)
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewSchemaless(attribute.String("service.name", "parity"))),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithMaxQueueSize(1<<16))),
	)
	official := otelslog.NewHandler("parity", otelslog.WithLoggerProvider(lp), otelslog.WithVersion("1.0.0"))

	const n = 600
	chains := make([][]chainStep, n)
	logged := make([]string, n) // what was logged, for a failure's message
	for i := range n {
		var a, b slog.Handler = sink, official
		for range rng.IntN(4) {
			step := randStep(rng)
			chains[i] = append(chains[i], step)
			if step.group != "" {
				a, b = a.WithGroup(step.group), b.WithGroup(step.group)
			} else {
				a, b = a.WithAttrs(step.attrs), b.WithAttrs(step.attrs)
			}
		}
		r := slog.NewRecord(time.Unix(0, rng.Int64N(1<<62)), slog.Level(rng.IntN(24)-8), fmt.Sprintf("message %d", i), 0)
		for range rng.IntN(7) {
			r.AddAttrs(randParityAttr(rng, 0))
		}
		rctx := ctx
		if rng.IntN(2) == 0 {
			rctx = trace.ContextWithSpanContext(ctx, randSpan(rng))
		}
		logged[i] = fmt.Sprintf("chain %v, record attrs %v", chains[i], recordAttrs(r))
		require.NoError(t, a.Handle(rctx, r.Clone()))
		require.NoError(t, b.Handle(rctx, r.Clone()))
	}
	require.NoError(t, sink.Close())
	require.NoError(t, lp.Shutdown(ctx))

	require.Empty(t, ours.errs)
	require.Empty(t, theirs.errs)
	require.Len(t, ours.recs, n)
	require.Len(t, theirs.recs, n)
	for i := range n {
		compareRecord(t, i, chains[i], logged[i], ours, theirs)
		if t.Failed() {
			return
		}
	}
}

// compareRecord compares record i of both receivers, field by field.
func compareRecord(t *testing.T, i int, chain []chainStep, logged string, ours, theirs *parityReceiver) {
	o, s := ours.recs[i], theirs.recs[i]
	where := fmt.Sprintf("record %d (%q; %s)", i, s.GetBody().GetStringValue(), logged)
	require.Equal(t, s.GetTimeUnixNano(), o.GetTimeUnixNano(), where)
	require.NotZero(t, o.GetObservedTimeUnixNano(), where) // each path's own clock
	require.Equal(t, s.GetSeverityNumber(), o.GetSeverityNumber(), where)
	require.Equal(t, s.GetSeverityText(), o.GetSeverityText(), where)
	require.True(t, proto.Equal(s.GetBody(), o.GetBody()), where)
	require.Equal(t, s.GetTraceId(), o.GetTraceId(), where)
	require.Equal(t, s.GetSpanId(), o.GetSpanId(), where)
	require.Equal(t, s.GetFlags(), o.GetFlags(), where)
	require.Equal(t, s.GetEventName(), o.GetEventName(), where)
	require.Equal(t, s.GetDroppedAttributesCount(), o.GetDroppedAttributesCount(), where)
	require.True(t, proto.Equal(theirs.scopes[i], ours.scopes[i]), "%s: scope %v, want %v", where, ours.scopes[i], theirs.scopes[i])
	require.Equal(t, kvsOf(theirs.resource[i]), kvsOf(ours.resource[i]), where)

	want := normalizeKVs(kvsOf(s.GetAttributes()), true)
	got := normalizeKVs(spliceGroups(kvsOf(o.GetAttributes()), chain), true)
	if path, ok := sameKVs(got, want, true); !ok {
		t.Fatalf("%s: attributes differ at %s\notlpsink:      %v\notelslog+SDK:  %v", where, path, got, want)
	}
}

func recordAttrs(r slog.Record) []slog.Attr {
	var as []slog.Attr
	r.Attrs(func(a slog.Attr) bool { as = append(as, a); return true })
	return as
}

// chainStep is one WithGroup (group set) or WithAttrs call.
type chainStep struct {
	group string
	attrs []slog.Attr
}

func randStep(rng *rand.Rand) chainStep {
	if rng.IntN(2) == 0 {
		return chainStep{group: fmt.Sprintf("g%d", rng.IntN(3))}
	}
	as := make([]slog.Attr, rng.IntN(3))
	for i := range as {
		as[i] = randParityAttr(rng, 0)
	}
	return chainStep{attrs: as}
}

func randSpan(rng *rand.Rand) trace.SpanContext {
	var tid trace.TraceID
	var sid trace.SpanID
	for i := range tid {
		tid[i] = byte(rng.IntN(256))
	}
	for i := range sid {
		sid[i] = byte(rng.IntN(256))
	}
	tid[0], sid[0] = 1, 1 // valid: not all zero
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(rng.IntN(2))})
}

type parityPoint struct {
	X int
	S string
}

type parityLevel int

type parityValuer struct{ v slog.Value }

func (p parityValuer) LogValue() slog.Value { return p.v }

type codedErr struct{ code int }

func (e *codedErr) Error() string { return fmt.Sprintf("code %d", e.code) }

// randParityAttr is a random attribute of every slog kind and the KindAny
// shapes otelslog converts, with repeated and empty keys.
func randParityAttr(rng *rand.Rand, depth int) slog.Attr {
	key := fmt.Sprintf("k%d", rng.IntN(5))
	if rng.IntN(12) == 0 {
		key = ""
	}
	switch rng.IntN(22) {
	case 0:
		return slog.String(key, fmt.Sprintf("v%d", rng.IntN(100)))
	case 1:
		return slog.Int64(key, rng.Int64()-math.MaxInt64/2)
	case 2:
		return slog.Uint64(key, rng.Uint64()) // above MaxInt64 half the time
	case 3:
		return slog.Float64(key, rng.NormFloat64())
	case 4:
		return slog.Bool(key, rng.IntN(2) == 0)
	case 5:
		return slog.Duration(key, time.Duration(rng.Int64()))
	case 6:
		return slog.Time(key, time.Unix(0, rng.Int64N(1<<62)))
	case 7:
		return slog.Any(key, fmt.Errorf("failure %d", rng.IntN(10))) // no %w: an *errors.errorString, as errors.New
	case 8:
		return slog.Any(key, fmt.Errorf("wrapped: %w", &codedErr{rng.IntN(10)}))
	case 9:
		return slog.Any(key, map[string]int{"a": rng.IntN(9), "b": rng.IntN(9)})
	case 10:
		return slog.Any(key, map[int]any{rng.IntN(9): "x", 10: []int{1}, 11: nil})
	case 11:
		return slog.Any(key, []any{"s", rng.IntN(9), 1.5, true, nil, errors.New("e"), parityPoint{1, "p"}, uint64(math.MaxUint64)})
	case 12:
		return slog.Any(key, &parityPoint{rng.IntN(9), "q"})
	case 13:
		return slog.Any(key, parityPoint{rng.IntN(9), "r"})
	case 14:
		return slog.Any(key, []string{"x", "y"}[:rng.IntN(3)])
	case 15:
		return slog.Any(key, []byte{byte(rng.IntN(256)), 2})
	case 16:
		return slog.Any(key, parityLevel(rng.IntN(4)))
	case 17:
		return slog.Any(key, nil)
	case 18:
		return slog.Any(key, [2]uint8{1, byte(rng.IntN(256))})
	case 19:
		if key == "" { // a LogValuer group under an empty key: otlpsink inlines it (documented)
			key = "lv"
		}
		return slog.Any(key, parityValuer{slog.GroupValue(slog.Int("in", 1))})
	case 20:
		return slog.Any(key, parityValuer{slog.IntValue(rng.IntN(9))})
	}
	if depth > 2 {
		return slog.String(key, "deep")
	}
	g := make([]any, rng.IntN(4)) // none: an empty group
	for i := range g {
		g[i] = randParityAttr(rng, depth+1)
	}
	a := slog.Group(key, g...)
	if key != "" && !solid(a) {
		// A group that ends up empty: otlpsink leaves it out, so it does
		// not replace an earlier attribute of its key where otelslog's
		// empty map does (documented); a key of its own keeps the
		// comparison to what both write.
		a.Key = fmt.Sprintf("hollow%d", rng.Uint64())
	}
	return a
}

// solid reports whether a is written by otlpsink: a non-empty key, and for
// a group a member that is written (members of a group under an empty key
// are inlined).
func solid(a slog.Attr) bool {
	if a.Value.Kind() != slog.KindGroup {
		return a.Key != ""
	}
	if a.Key == "" && len(a.Value.Group()) == 0 {
		return false
	}
	for _, m := range a.Value.Group() {
		if solid(m) {
			return true
		}
	}
	return false
}

// pkv is one decoded KeyValue; a kvlist's members are kept as a []pkv.
type pkv struct {
	Key   string
	Value any // string, int64, float64, bool, []byte, []any, []pkv, nil (empty)
}

func kvsOf(kvs []*commonpb.KeyValue) []pkv {
	out := make([]pkv, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, pkv{kv.GetKey(), valueOf(kv.GetValue())})
	}
	return out
}

func valueOf(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, valueOf(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return kvsOf(x.KvlistValue.GetValues())
	}
	return nil
}

// spliceGroups applies to otlpsink's attributes the documented difference
// of WithGroup: otelslog leaves out an enclosing group (not the innermost)
// that has no attributes of its own, putting its content one level up,
// where otlpsink keeps it as slog's handlers do.
func spliceGroups(top []pkv, chain []chainStep) []pkv {
	type lvl struct {
		name string
		own  int
	}
	var levels []lvl
	for _, s := range chain {
		if s.group != "" {
			levels = append(levels, lvl{name: s.group})
		} else if len(levels) > 0 {
			levels[len(levels)-1].own += otelslogCount(s.attrs)
		}
	}
	var splice func(list []pkv, i int) []pkv
	splice = func(list []pkv, i int) []pkv {
		if i == len(levels) {
			return list
		}
		// The group's KeyValue is the last with its name: the record's
		// attributes come after the level's own.
		at := -1
		for j, kv := range list {
			if kv.Key == levels[i].name {
				at = j
			}
		}
		if at < 0 {
			return list
		}
		inner, ok := list[at].Value.([]pkv)
		if !ok {
			return list
		}
		inner = splice(slices.Clone(inner), i+1)
		if levels[i].own > 0 || i == len(levels)-1 {
			list[at].Value = inner
			return list
		}
		out := slices.Concat(list[:at], inner, list[at+1:])
		return lastWins(out)
	}
	return splice(slices.Clone(top), 0)
}

// otelslogCount is how many attributes otelslog's kvBuffer.AddAttr keeps
// of attrs at a handler level: errors become the record's error, an empty
// attribute is dropped, a group under an empty key is inlined.
func otelslogCount(attrs []slog.Attr) int {
	n := 0
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindAny {
			if _, ok := a.Value.Any().(error); ok {
				continue
			}
		}
		switch {
		case a.Key == "" && a.Value.Kind() == slog.KindGroup:
			n += otelslogCount(a.Value.Group())
		case a.Key == "" && a.Value.Any() == nil:
		default:
			n++
		}
	}
	return n
}

// lastWins keeps each key once, at its first position with its last value.
func lastWins(list []pkv) []pkv {
	var out []pkv
	for _, kv := range list {
		if j := slices.IndexFunc(out, func(o pkv) bool { return o.Key == kv.Key }); j >= 0 {
			out[j].Value = kv.Value
			continue
		}
		out = append(out, kv)
	}
	return out
}

// normalizeKVs applies the documented differences that do not depend on the
// record: kvlist members with an empty key (otelslog keeps them inside
// groups; OTLP keys are never empty, so otlpsink drops them), then members
// whose value is an empty kvlist (otelslog writes an empty group; slog's
// handlers, and otlpsink, leave it out).
func normalizeKVs(list []pkv, top bool) []pkv {
	out := []pkv{}
	for _, kv := range list {
		if kv.Key == "" && !top {
			continue
		}
		kv.Value = normalizeValue(kv.Value)
		if l, ok := kv.Value.([]pkv); ok && len(l) == 0 {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func normalizeValue(v any) any {
	switch x := v.(type) {
	case []pkv:
		return normalizeKVs(x, false)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e)
		}
		return out
	}
	return v
}

// sameKVs compares two attribute lists: in order at the top level, as maps
// inside kvlists (the SDK sorts a map's keys; OTLP kvlists are unordered).
// It returns the path of the first difference.
func sameKVs(got, want []pkv, ordered bool) (string, bool) {
	if !ordered {
		got, want = slices.Clone(got), slices.Clone(want)
		byKey := func(a, b pkv) int {
			if a.Key < b.Key {
				return -1
			}
			if a.Key > b.Key {
				return 1
			}
			return 0
		}
		slices.SortStableFunc(got, byKey)
		slices.SortStableFunc(want, byKey)
	}
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) {
			return fmt.Sprintf("[%d] (lengths %d and %d)", i, len(got), len(want)), false
		}
		if got[i].Key != want[i].Key {
			return fmt.Sprintf("[%d] key %q, want %q", i, got[i].Key, want[i].Key), false
		}
		if p, ok := sameValue(got[i].Value, want[i].Value); !ok {
			return got[i].Key + p, false
		}
	}
	return "", true
}

// sameValue compares two values; the documented difference accepted here
// is a uint64 above MaxInt64, which otlpsink writes as its decimal text
// where otelslog writes a double.
func sameValue(got, want any) (string, bool) {
	switch w := want.(type) {
	case []pkv:
		g, ok := got.([]pkv)
		if !ok {
			return fmt.Sprintf(": %v, want kvlist %v", got, want), false
		}
		p, ok := sameKVs(g, w, false)
		return "." + p, ok
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf(": %v, want array %v", got, want), false
		}
		for i := range w {
			if p, ok := sameValue(g[i], w[i]); !ok {
				return fmt.Sprintf("[%d]%s", i, p), false
			}
		}
		return "", true
	case float64:
		if s, ok := got.(string); ok {
			if u, err := strconv.ParseUint(s, 10, 64); err == nil && u > math.MaxInt64 && float64(u) == w {
				return "", true
			}
		}
		if g, ok := got.(float64); ok && (g == w || math.IsNaN(g) && math.IsNaN(w)) {
			return "", true
		}
		return fmt.Sprintf(": %#v, want %#v", got, want), false
	}
	if fmt.Sprintf("%T %#v", got, got) != fmt.Sprintf("%T %#v", want, want) {
		return fmt.Sprintf(": %#v, want %#v", got, want), false
	}
	return "", true
}
