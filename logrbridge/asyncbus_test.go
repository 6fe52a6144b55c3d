package logrbridge

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

func TestAsyncbusEndToEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{AddSource: true, Level: slog.Level(-2)})
	l := NewLogger(h)
	wantFile, base := here()
	l.WithName("db").WithValues("k", 1).V(2).Info("query", "rows", 3)
	l.V(3).Info("hidden")
	l.WithName("db").WithName("pool").Error(errors.New("e"), "failed")
	require.NoError(t, Close(l))
	ls := lines(t, buf.String())
	require.Len(t, ls, 2, buf.String())
	assert.Equal(t, "db", ls[0]["logger"])
	assert.EqualValues(t, 1, ls[0]["k"])
	assert.EqualValues(t, 3, ls[0]["rows"])
	assert.Equal(t, "DEBUG+2", ls[0]["level"])
	file, line := sourceOf(t, ls[0])
	assert.Equal(t, wantFile, file)
	assert.Equal(t, base+1, line)
	assert.Equal(t, "db.pool", ls[1]["logger"])
	assert.Equal(t, "e", ls[1]["error"])
	assert.Equal(t, "ERROR", ls[1]["level"])
}

func TestAsyncbusLevelRulesApplyToLogrNames(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	rules := asyncbus.MustParseLevelRules("info,db=debug")
	h := asyncbus.NewHandler(&buf, &asyncbus.Options{Rules: rules})
	l := NewLogger(h)
	db, http := l.WithName("db"), l.WithName("http")
	assert.True(t, db.V(4).Enabled())
	assert.False(t, http.V(1).Enabled())
	require.NoError(t, rules.Set("warn,http=debug"))
	assert.False(t, db.V(0).Enabled())
	assert.True(t, http.V(4).Enabled())
	http.WithName("client").V(4).Info("visible")
	require.NoError(t, Close(l))
	m := one(t, buf.String())
	assert.Equal(t, "http.client", m["logger"])
}

var _ io.Writer = (*syncbuf.Buffer)(nil)

// forwardingSink wraps another sink the way controller-runtime's
// delegating sink does once SetLogger has run: With* calls return the
// wrapped sink's result.
type forwardingSink struct{ logr.LogSink }

func (f forwardingSink) WithValues(kv ...any) logr.LogSink { return f.LogSink.WithValues(kv...) }
func (f forwardingSink) WithName(n string) logr.LogSink    { return f.LogSink.WithName(n) }

func TestFlushAndCloseThroughForwardingSink(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	h := asyncbus.NewHandler(&buf, nil)
	wrapped := logr.New(forwardingSink{NewLogger(h).GetSink()})
	wrapped.Info("one")
	wrapped.WithName("n").Info("two")
	require.NoError(t, Flush(wrapped))
	ls := lines(t, buf.String())
	require.Len(t, ls, 2, "Flush reached the handler: %s", buf.String())
	require.NoError(t, Close(wrapped))
	assert.ErrorIs(t, h.Handle(t.Context(), slog.NewRecord(time.Now(), 0, "after", 0)), asyncbus.ErrClosed, "Close reached the handler")
	assert.NoError(t, Flush(logr.Discard()), "a foreign sink is left alone")
	assert.NoError(t, Close(logr.Logger{}), "a zero logger is left alone")
}

func TestErrorAfterValuesAndValueConverter(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	conv := func(v any) (slog.Value, bool) {
		if p, ok := v.(*pod); ok {
			return slog.StringValue("pod " + p.Name), true
		}
		return slog.Value{}, false
	}
	NewLogger(h, ErrorAfterValues(true), ValueConverter(conv)).Error(errors.New("boom"), "m", "obj", &pod{Name: "p"}, "n", 1)
	out := buf.String()
	assert.Regexp(t, `"msg":"m","obj":"pod p","n":1,"error":"boom"}`, out)
}

func TestStackTraceHasNoRuntimeEntryFrame(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	done := make(chan struct{})
	go func() {
		defer close(done)
		NewLogger(h, StackTraces(slog.LevelError)).Error(nil, "m")
	}()
	<-done
	st := one(t, buf.String())["stacktrace"].(string)
	assert.NotContains(t, st, "runtime.goexit", st)
	assert.Contains(t, st, "TestStackTraceHasNoRuntimeEntryFrame.func", st)
}

// errStringer is an error that is also a fmt.Stringer.
type errStringer struct{}

func (errStringer) Error() string  { return "as error" }
func (errStringer) String() string { return "as stringer" }

func TestKeepErrors(t *testing.T) {
	h, buf := jsonHandler(slog.LevelInfo)
	NewLogger(h, KeepErrors(true)).Error(errStringer{}, "m", "v", errStringer{})
	m := one(t, buf.String())
	assert.Equal(t, "as error", m["error"])
	assert.Equal(t, "as error", m["v"], "an error before a Stringer, as zap.Any")
	h, buf = jsonHandler(slog.LevelInfo)
	NewLogger(h).Info("m", "v", errStringer{})
	assert.Equal(t, "as stringer", one(t, buf.String())["v"], "default: Stringer first")
}

// logBoth logs one Error through each logger, on consecutive lines.
func logBoth(root *slog.Logger, bridge logr.Logger) {
	root.Error("via root")
	bridge.Error(nil, "via bridge")
}

// TestStackTraceSameAsRootHandler: asyncbus's own Options.Features.StackTraceLevel
// and StackTraces write one format (zap's, from internal/stack): from the
// same function, the stacks differ only in the first frame's line.
func TestStackTraceSameAsRootHandler(t *testing.T) {
	var viaRoot, viaBridge syncbuf.Buffer
	rh := asyncbus.NewHandler(&viaRoot, &asyncbus.Options{Features: asyncbus.FeatureOptions{StackTraceLevel: slog.LevelError}})
	bh := asyncbus.NewHandler(&viaBridge, nil)
	logBoth(slog.New(rh), NewLogger(bh, StackTraces(slog.LevelError)))
	require.NoError(t, rh.Close())
	require.NoError(t, bh.Close())
	rs := strings.Split(one(t, viaRoot.String())["stacktrace"].(string), "\n")
	bs := strings.Split(one(t, viaBridge.String())["stacktrace"].(string), "\n")
	require.Greater(t, len(rs), 4)
	assert.Equal(t, "github.com/asyncbus/asyncbus/logrbridge.logBoth", rs[0])
	assert.Equal(t, rs[0], bs[0])
	_, rootLine, _ := strings.Cut(rs[1], ".go:")
	_, bridgeLine, _ := strings.Cut(bs[1], ".go:")
	r, _ := strconv.Atoi(rootLine)
	b, _ := strconv.Atoi(bridgeLine)
	assert.Equal(t, r+1, b, "%s / %s", rs[1], bs[1])
	assert.Equal(t, rs[2:], bs[2:], "the same frames below")
}

// TestAttributeBudgetThroughLogr: values logged through logr,
// in Info, Error and WithValues, are bounded as slog attributes are: once
// 16 MiB of them are written, the value at hand is written as
// encode.TruncatedValue and the rest are left out.
func TestAttributeBudgetThroughLogr(t *testing.T) {
	big := strings.Repeat("x", 6<<20)
	kvs := []any{"k0", big, "k1", big, "k2", big, "k3", big, "k4", big}
	tests := []struct {
		name string
		log  func(l logr.Logger)
	}{
		{"Info", func(l logr.Logger) { l.Info("wide", kvs...) }},
		{"Error", func(l logr.Logger) { l.Error(errors.New("e"), "wide", kvs...) }},
		{"WithValues", func(l logr.Logger) { l.WithValues(kvs...).Info("wide") }},
	}
	for _, f := range []asyncbus.Format{asyncbus.JSON, asyncbus.ZapJSON} {
		for _, tt := range tests {
			t.Run(f.String()+"/"+tt.name, func(t *testing.T) {
				var buf syncbuf.Buffer
				l := NewLogger(asyncbus.NewHandler(&buf, &asyncbus.Options{Format: f}))
				tt.log(l)
				require.NoError(t, Close(l))
				out := buf.String()
				assert.Equal(t, 1, strings.Count(out, encode.TruncatedValue))
				assert.Contains(t, out, `"k3":"`+encode.TruncatedValue+`"`)
				assert.NotContains(t, out, `"k4"`)
				assert.True(t, json.Valid([]byte(out)), "one valid JSON line")
			})
		}
	}
}

// kubeLikeObject is shaped like the Kubernetes objects controller-runtime
// logs as values: metadata with labels and times, a spec, a status.
type kubeLikeObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Created     time.Time         `json:"creationTimestamp"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int32   `json:"replicas,omitempty"`
		Args     []string `json:"args"`
	} `json:"spec"`
}

// TestAsyncbusWritesValuesAsSlog: struct, map and slice values logged
// through logr reach asyncbus as slog.Any values and are written as
// slog's JSONHandler writes them.
func TestAsyncbusWritesValuesAsSlog(t *testing.T) {
	defer goleak.VerifyNone(t)
	obj := kubeLikeObject{Kind: "Deployment"}
	obj.Metadata.Name, obj.Metadata.Namespace = "web", "prod"
	obj.Metadata.Labels = map[string]string{"tier": "frontend", "app": "web"}
	obj.Metadata.Created = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	replicas := int32(3)
	obj.Spec.Replicas, obj.Spec.Args = &replicas, []string{"-v", "<2>"}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logAll := func(l logr.Logger) {
		l.Info("reconciled", "object", obj, "ptr", &obj, "ids", []int{1, 2}, "m", map[string]any{"b": 1.5, "a": nil})
	}
	var want strings.Builder
	logAll(NewLogger(slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: noTime})))
	var got syncbuf.Buffer
	l := NewLogger(asyncbus.NewHandler(&got, &asyncbus.Options{ReplaceAttr: noTime}))
	logAll(l)
	require.NoError(t, Close(l))
	require.Contains(t, want.String(), `"creationTimestamp":"2026-01-02T03:04:05.0000006Z"`)
	require.Equal(t, want.String(), got.String())
}
