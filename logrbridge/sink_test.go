package logrbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

func TestVLevels(t *testing.T) {
	for _, tc := range []struct {
		handlerLevel slog.Level
		v            int
		enabled      bool
		wantLevel    string
	}{
		{slog.LevelInfo, 0, true, "INFO"},
		{slog.LevelInfo, 1, false, ""},
		{slog.Level(-1), 1, true, "DEBUG+3"},
		{slog.Level(-1), 2, false, ""},
		{slog.LevelDebug, 4, true, "DEBUG"},
		{slog.Level(-10), 9, true, "DEBUG-5"},
		{slog.LevelWarn, 0, false, ""},
	} {
		t.Run(fmt.Sprintf("h=%d/v=%d", tc.handlerLevel, tc.v), func(t *testing.T) {
			h, buf := jsonHandler(tc.handlerLevel)
			l := NewLogger(h)
			assert.Equal(t, tc.enabled, l.V(tc.v).Enabled())
			assert.Equal(t, h.Enabled(context.Background(), slog.Level(-tc.v)), l.V(tc.v).Enabled())
			l.V(tc.v).Info("hello", "k", "v")
			if !tc.enabled {
				assert.Empty(t, buf.String())
				return
			}
			m := one(t, buf.String())
			assert.Equal(t, tc.wantLevel, m["level"])
			assert.Equal(t, "hello", m["msg"])
			assert.Equal(t, "v", m["k"])
		})
	}
}

func TestDisabledAllocatesNothing(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	l := NewLogger(h).WithValues("a", 1)
	kv4 := []any{"k1", "v1", "k2", 2, "k3", true, "k4", "v4"}
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"V(1).Info no kv", func() { l.V(1).Info("disabled") }},
		// A literal variadic list escapes at the call site (logr.Logger.Info
		// hands it to an interface), whatever the sink; the sink itself must
		// add nothing, which a prebuilt list shows.
		{"V(1).Info 4 kv", func() { l.V(1).Info("disabled", kv4...) }},
		{"V(5).Enabled", func() { _ = l.V(5).Enabled() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Zero(t, testing.AllocsPerRun(200, tc.fn))
		})
	}
	assert.Empty(t, buf.String())
}

func TestErrorAlwaysAtErrorLevel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []Option
		v       int
		err     error
		wantKey string
	}{
		{"default key", nil, 0, errors.New("boom"), "error"},
		{"V(3) ignored", nil, 3, errors.New("boom"), "error"},
		{"custom key", []Option{ErrorKey("err")}, 0, errors.New("boom"), "err"},
		{"nil error", nil, 0, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, buf := jsonHandler(slog.LevelInfo)
			NewLogger(h, tc.opts...).V(tc.v).Error(tc.err, "failed", "k", 1)
			m := one(t, buf.String())
			assert.Equal(t, "ERROR", m["level"])
			assert.Equal(t, "failed", m["msg"])
			assert.EqualValues(t, 1, m["k"])
			if tc.err == nil {
				assert.NotContains(t, m, "error")
				assert.Len(t, m, 5) // time, level, source, msg, k
				return
			}
			assert.Equal(t, tc.err.Error(), m[tc.wantKey])
		})
	}
}

func TestErrorHonoursHandlerLevel(t *testing.T) {
	var buf syncbuf.Buffer
	h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError + 2})
	l := NewLogger(h)
	l.Error(errors.New("boom"), "suppressed")
	slog.New(logr.ToSlogHandler(l)).Error("suppressed too")
	assert.Empty(t, buf.String())
}

func TestWarnKeepsLevelThroughToSlogHandler(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	sl := slog.New(logr.ToSlogHandler(NewLogger(h)))
	sl.Warn("careful", "k", "v")
	sl.Debug("hidden")
	sl.Error("bad")
	ls := lines(t, buf.String())
	require.Len(t, ls, 2)
	assert.Equal(t, "WARN", ls[0]["level"])
	assert.Equal(t, "v", ls[0]["k"])
	assert.Equal(t, "ERROR", ls[1]["level"])
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []Option
		build    func(logr.Logger) logr.Logger
		wantKey  string
		wantName string
	}{
		{"one", nil, func(l logr.Logger) logr.Logger { return l.WithName("a") }, "logger", "a"},
		{"nested", nil, func(l logr.Logger) logr.Logger { return l.WithName("a").WithName("b") }, "logger", "a.b"},
		{"separator", []Option{NameSeparator("/")}, func(l logr.Logger) logr.Logger { return l.WithName("a").WithName("b") }, "logger", "a/b"},
		{"key", []Option{NameKey("name")}, func(l logr.Logger) logr.Logger { return l.WithName("a") }, "name", "a"},
		{"after values", nil, func(l logr.Logger) logr.Logger {
			return l.WithValues("x", 1).WithName("a").WithValues("y", 2).WithName("b")
		}, "logger", "a.b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, buf := jsonHandler(slog.LevelInfo)
			tc.build(NewLogger(h, tc.opts...)).Info("m")
			out := buf.String()
			m := one(t, out)
			assert.Equal(t, tc.wantName, m[tc.wantKey])
			// The name comes before every WithValues pair.
			if strings.Contains(out, `"x":`) {
				assert.Less(t, strings.Index(out, `"`+tc.wantKey+`":`), strings.Index(out, `"x":`))
				assert.Less(t, strings.Index(out, `"x":`), strings.Index(out, `"y":`))
			}
		})
	}
}

func TestNamer(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	var got []string
	l := NewLogger(h, Namer(func(root slog.Handler, full string) slog.Handler {
		got = append(got, full)
		return root.WithAttrs([]slog.Attr{slog.String("component", full)})
	}))
	l.WithName("a").WithValues("k", 1).WithName("b").Info("m")
	assert.Equal(t, []string{"a", "a.b"}, got)
	m := one(t, buf.String())
	assert.Equal(t, "a.b", m["component"])
	assert.EqualValues(t, 1, m["k"])
	assert.NotContains(t, m, "logger")
}

func TestWithValuesOrderAndImmutability(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	parent := NewLogger(h).WithValues("a", 1, "b", 2)
	child := parent.WithValues("c", 3)
	sibling := parent.WithValues("d", 4)
	parent.Info("p")
	child.Info("c", "e", 5)
	sibling.Info("s")
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, out, 3)
	assert.Contains(t, out[0], `"msg":"p","a":1,"b":2}`)
	assert.Contains(t, out[1], `"msg":"c","a":1,"b":2,"c":3,"e":5}`)
	assert.Contains(t, out[2], `"msg":"s","a":1,"b":2,"d":4}`)
}

func TestKeyValueEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []any
		want string
	}{
		{"odd", []any{"a", 1, "b"}, `"a":1,"b":"(MISSING)"}`},
		{"int key", []any{1, "x", "b", 2}, `"1":"x","b":2}`},
		{"struct key", []any{struct{ n string }{"s"}, "x", "b", 2}, `"{s}":"x","b":2}`},
		{"nil key", []any{nil, "x", "b", 2}, `"<nil>":"x","b":2}`},
		{"lone non-string", []any{42}, `"42":"(MISSING)"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "WithValues"} {
				h, buf := jsonHandler(slog.LevelInfo)
				l := NewLogger(h)
				if via == "Info" {
					l.Info("m", tc.kv...)
				} else {
					l.WithValues(tc.kv...).Info("m")
				}
				assert.True(t, strings.HasSuffix(strings.TrimSpace(buf.String()), `"msg":"m",`+tc.want), "%s: %s", via, buf.String())
			}
		})
	}
}

type marshalerStringer struct{}

func (marshalerStringer) MarshalLog() any { return "from MarshalLog" }
func (marshalerStringer) String() string  { return "from String" }

type stringerOnly struct{ s string }

func (s stringerOnly) String() string { return "S:" + s.s }

type panicker struct{}

func (panicker) MarshalLog() any { panic("marshal boom") }

type panicStringer struct{}

func (panicStringer) String() string { panic("string boom") }

type panicError struct{}

func (panicError) Error() string { panic("error boom") }

type nilStringer struct{ s string }

func (n *nilStringer) String() string { return n.s }

type valuer struct{}

func (valuer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("x", 1), slog.String("y", "z"))
}

type panicValuer struct{}

func (panicValuer) LogValue() slog.Value { panic("valuer boom") }

type selfMarshaler struct{}

func (s selfMarshaler) MarshalLog() any { return s }

// objectRef and namespacedName copy what klog.ObjectRef and
// types.NamespacedName return from MarshalLog.
type objectRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

func (r objectRef) MarshalLog() any {
	type or objectRef
	return or(r)
}

func (r objectRef) String() string { return r.Namespace + "/" + r.Name }

type namespacedName struct {
	Namespace string
	Name      string
}

func (n namespacedName) MarshalLog() any {
	return struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
	}{Name: n.Name, Namespace: n.Namespace}
}

func (n namespacedName) String() string { return n.Namespace + "/" + n.Name }

type pod struct {
	Namespace, Name string
	Spec            string
}

func (p *pod) GetName() string      { return p.Name }
func (p *pod) GetNamespace() string { return p.Namespace }

func TestValues(t *testing.T) {
	dur := 1500 * time.Millisecond
	for _, tc := range []struct {
		name   string
		opts   []Option
		value  any
		want   string
		notify string
	}{
		{"marshaler before stringer", nil, marshalerStringer{}, `"from MarshalLog"`, ""},
		{"stringer", nil, stringerOnly{"a"}, `"S:a"`, ""},
		{"error", nil, errors.New("e"), `"e"`, ""},
		{"log valuer", nil, valuer{}, `{"x":1,"y":"z"}`, ""},
		{"duration", nil, dur, `1500000000`, ""},
		{"uint8", nil, uint8(7), `7`, ""},
		{"float32", nil, float32(0.5), `0.5`, ""},
		{"slice", nil, []int{1, 2}, `[1,2]`, ""},
		{"map", nil, map[string]int{"a": 1}, `{"a":1}`, ""},
		{"nil", nil, nil, `null`, ""},
		{"panicking MarshalLog", nil, panicker{}, `"<panic: marshal boom>"`, ""},
		{"panicking String", nil, panicStringer{}, `"<panic: string boom>"`, ""},
		{"panicking Error", nil, panicError{}, `"<panic: error boom>"`, ""},
		{"nil pointer String", nil, (*nilStringer)(nil), `"<panic: runtime error: invalid memory address or nil pointer dereference>"`, ""},
		{"panicking LogValue", nil, panicValuer{}, `"<panic: valuer boom>"`, ""},
		{"MarshalLog returning itself", nil, selfMarshaler{}, `{}`, ""},
		{"ObjectRef", nil, objectRef{Name: "p", Namespace: "ns"}, `{"name":"p","namespace":"ns"}`, ""},
		{"ObjectRef cluster scoped", nil, objectRef{Name: "n"}, `{"name":"n"}`, ""},
		{"NamespacedName", nil, namespacedName{Namespace: "ns", Name: "p"}, `{"name":"p","namespace":"ns"}`, ""},
		{"plain struct untouched", nil, struct{ Name, Namespace string }{"p", "ns"}, `{"Name":"p","Namespace":"ns"}`, ""},
		{"object full", nil, &pod{Namespace: "ns", Name: "p", Spec: "big"}, `{"Namespace":"ns","Name":"p","Spec":"big"}`, ""},
		{"object shrunk", []Option{ShrinkObjects(true)}, &pod{Namespace: "ns", Name: "p", Spec: "big"}, `{"name":"p","namespace":"ns"}`, ""},
		{"nil object shrunk", []Option{ShrinkObjects(true)}, (*pod)(nil), `null`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "WithValues"} {
				h, buf := jsonHandler(slog.LevelInfo)
				l := NewLogger(h, tc.opts...)
				require.NotPanics(t, func() {
					if via == "Info" {
						l.Info("m", "v", tc.value)
					} else {
						l.WithValues("v", tc.value).Info("m")
					}
				})
				assert.True(t, strings.HasSuffix(strings.TrimSpace(buf.String()), `"msg":"m","v":`+tc.want+`}`), "%s: %s", via, buf.String())
			}
		})
	}
}

func TestPanickingErrorInError(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	require.NotPanics(t, func() { NewLogger(h).Error(panicError{}, "m") })
	assert.Equal(t, "<panic: error boom>", one(t, buf.String())["error"])
}

func helper(l logr.Logger, msg string) {
	l.WithCallDepth(1).Info(msg)
}

func TestCaller(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	l := NewLogger(h)
	wantFile, base := here()
	l.Info("direct")                                     // base+1
	helper(l, "helper")                                  // base+2
	l.WithCallDepth(2).WithCallDepth(-1).Info("nothing") // base+3: depth 1 → this function's caller
	l.WithName("n").WithValues("k", 1).Error(nil, "err") // base+4
	l.V(0).WithCallDepth(-1).Info("negative")            // base+5: logr.Logger.Info's frame
	func() {
		l.WithCallDepth(1).Info("closure") // reported at base+7
	}()
	ls := lines(t, buf.String())
	require.Len(t, ls, 6)
	file, line := sourceOf(t, ls[0])
	assert.Equal(t, wantFile, file)
	assert.Equal(t, base+1, line)
	file, line = sourceOf(t, ls[1])
	assert.Equal(t, wantFile, file)
	assert.Equal(t, base+2, line)
	file, _ = sourceOf(t, ls[2])
	assert.True(t, strings.HasSuffix(file, "testing/testing.go"), file)
	_, line = sourceOf(t, ls[3])
	assert.Equal(t, base+4, line)
	file, _ = sourceOf(t, ls[4])
	assert.True(t, strings.HasSuffix(file, "go-logr/logr@v1.4.4/logr.go"), file)
	_, line = sourceOf(t, ls[5])
	assert.Equal(t, base+8, line)
}

func TestRecordCallerOff(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	NewLogger(h, RecordCaller(false)).Info("m")
	assert.NotContains(t, one(t, buf.String()), "source") // slog omits the source of a record without PC
}

func TestCallerThroughSlog(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	sl := slog.New(logr.ToSlogHandler(NewLogger(h).WithName("n")))
	wantFile, base := here()
	sl.Info("via slog")
	file, line := sourceOf(t, one(t, buf.String()))
	assert.Equal(t, wantFile, file)
	assert.Equal(t, base+1, line)
}

func TestRoundTrip(t *testing.T) {
	h, _ := jsonHandler(slog.LevelInfo)
	for _, v := range []int{0, 1, 3} {
		l := NewLogger(h).WithName("x").WithValues("a", 1).V(v)
		back := logr.FromSlogHandler(logr.ToSlogHandler(l))
		assert.Same(t, l.GetSink(), back.GetSink(), "V=%d", v)
		assert.Equal(t, v, back.GetV())
	}
}

func TestRoundTripConcurrent(t *testing.T) {
	h, _ := jsonHandler(slog.LevelInfo)
	l := NewLogger(h)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				back := logr.FromSlogHandler(logr.ToSlogHandler(l.V(1)))
				back.Info("x")
			}
		})
	}
	wg.Wait()
}

func TestStackTraces(t *testing.T) {
	h, buf := jsonHandler(slog.LevelDebug)
	l := NewLogger(h, StackTraces(slog.LevelWarn))
	l.Info("no stack")
	_, base := here()
	l.Error(errors.New("e"), "with stack")
	slog.New(logr.ToSlogHandler(l)).Warn("slog warn")
	ls := lines(t, buf.String())
	require.Len(t, ls, 3)
	assert.NotContains(t, ls[0], "stacktrace")
	for i, m := range ls[1:] {
		st, ok := m["stacktrace"].(string)
		require.True(t, ok, m)
		first := strings.SplitN(st, "\n", 3)
		require.Len(t, first, 3)
		assert.Equal(t, "github.com/asyncbus/asyncbus/logrbridge.TestStackTraces", first[0])
		assert.True(t, strings.HasSuffix(first[1], fmt.Sprintf("sink_test.go:%d", base+1+i)), first[1])
	}
	buf2 := &syncbuf.Buffer{}
	NewLogger(slog.NewJSONHandler(buf2, nil), StackTraces(slog.LevelError), StacktraceKey("st")).Error(nil, "x")
	assert.Contains(t, one(t, buf2.String()), "st")
}

func TestOnHandleError(t *testing.T) {
	var got []error
	boom := errors.New("boom")
	l := NewLogger(failingHandler{boom}, OnHandleError(func(err error) { got = append(got, err) }))
	l.Info("a")
	l.Error(nil, "b")
	assert.Equal(t, []error{boom, boom}, got)
	require.NotPanics(t, func() { NewLogger(failingHandler{boom}).Info("ignored") })
}

type failingHandler struct{ err error }

func (failingHandler) Enabled(context.Context, slog.Level) bool    { return true }
func (f failingHandler) Handle(context.Context, slog.Record) error { return f.err }
func (f failingHandler) WithAttrs([]slog.Attr) slog.Handler        { return f }
func (f failingHandler) WithGroup(string) slog.Handler             { return f }

type flushCloser struct {
	failingHandler
	flushed, closed int
}

func (f *flushCloser) Flush() error { f.flushed++; return nil }
func (f *flushCloser) Close() error { f.closed++; return nil }

func TestFlushCloseHandler(t *testing.T) {
	fc := &flushCloser{}
	l := NewLogger(fc).WithName("x").WithValues("k", 1)
	require.NoError(t, Flush(l))
	require.NoError(t, Close(l))
	assert.Equal(t, 1, fc.flushed)
	assert.Equal(t, 1, fc.closed)
	h, ok := Handler(l)
	require.True(t, ok)
	assert.NotNil(t, h)
	// Loggers from elsewhere and handlers without the methods are fine.
	require.NoError(t, Flush(logr.Discard()))
	require.NoError(t, Close(logr.Discard()))
	_, ok = Handler(logr.Discard())
	assert.False(t, ok)
	jh, _ := jsonHandler(slog.LevelInfo)
	require.NoError(t, Flush(NewLogger(jh)))
	require.NoError(t, Close(NewLogger(jh)))
}

func TestGroupsThroughSlog(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	sl := slog.New(logr.ToSlogHandler(NewLogger(h).WithValues("top", 1))).WithGroup("g").With("a", 1)
	back := logr.FromSlogHandler(sl.Handler()).WithName("late").WithValues("b", 2)
	back.Info("m")
	m := one(t, buf.String())
	assert.Equal(t, "late", m["logger"])
	assert.EqualValues(t, 1, m["top"])
	assert.Equal(t, map[string]any{"a": float64(1), "b": float64(2)}, m["g"])
}

func TestSlogtest(t *testing.T) {
	for _, v := range []int{0, 2} {
		t.Run(fmt.Sprintf("V(%d)", v), func(t *testing.T) {
			var buf syncbuf.Buffer
			h := slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.Level(-10)})
			l := NewLogger(h).V(v)
			err := slogtest.TestHandler(logr.ToSlogHandler(l), func() []map[string]any {
				return lines(t, buf.String())
			})
			require.NoError(t, err)
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	root := NewLogger(h)
	var wg sync.WaitGroup
	const goroutines, perG = 8, 200
	for g := range goroutines {
		wg.Go(func() {
			l := root.WithName(fmt.Sprint("g", g)).WithValues("g", g)
			for i := range perG {
				l.WithValues("i", i).Info("m", "k", i)
				_ = l.V(1).Enabled()
			}
		})
	}
	wg.Wait()
	assert.Len(t, lines(t, buf.String()), goroutines*perG)
}
