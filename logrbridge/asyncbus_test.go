package logrbridge

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
)

func TestAsyncbusEndToEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf lockedBuffer
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
	var buf lockedBuffer
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

func TestDropInProduction(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf lockedBuffer
	l, h := NewWithHandler(WriteTo(&buf))
	assert.True(t, l.Enabled())
	assert.False(t, l.V(1).Enabled())
	l.Info("hello", "pod", &pod{Namespace: "ns", Name: "p", Spec: "big"})
	l.Error(errors.New("boom"), "failed")
	slog.New(logr.ToSlogHandler(l)).Warn("warned")
	require.NoError(t, h.Close())
	ls := lines(t, buf.String())
	require.Len(t, ls, 3, buf.String())
	assert.Equal(t, map[string]any{"name": "p", "namespace": "ns"}, ls[0]["pod"], "production shrinks objects")
	assert.NotContains(t, ls[0], "stacktrace")
	assert.NotContains(t, ls[0], "source", "no caller unless AddSource")
	assert.Equal(t, "boom", ls[1]["error"])
	st, _ := ls[1]["stacktrace"].(string)
	assert.True(t, strings.HasPrefix(st, "github.com/asyncbus/asyncbus/logrbridge.TestDropInProduction\n"), st)
	assert.NotContains(t, ls[2], "stacktrace", "production: stack traces from Error")
	assert.Zero(t, h.Stats().Dropped)
}

func TestDropInDevelopment(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf lockedBuffer
	l := New(UseDevMode(true), WriteTo(&buf))
	assert.True(t, l.V(1).Enabled())
	assert.False(t, l.V(2).Enabled())
	l.V(1).Info("debugging", "pod", &pod{Namespace: "ns", Name: "p", Spec: "big"})
	slog.New(logr.ToSlogHandler(l)).Warn("warned")
	require.NoError(t, Close(l))
	out := buf.String()
	assert.False(t, strings.HasPrefix(out, "{"), "console format: %s", out)
	ls := strings.Split(strings.TrimSpace(out), "\n")
	require.GreaterOrEqual(t, len(ls), 2, out)
	assert.Contains(t, ls[0], "debugging")
	assert.Contains(t, ls[0], "Spec", "development logs objects in full")
	assert.Contains(t, out, "warned")
	assert.Contains(t, out, "logrbridge.TestDropInDevelopment", "development: stack trace at Warn")
}

func TestDropInFromFlags(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf lockedBuffer
	opts := Options{}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	opts.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--zap-log-level=3", "--zap-time-encoding=nanos", "--zap-stacktrace-level=panic", "--zap-encoder=json", "--zap-devel"}))
	l := New(UseFlagOptions(&opts), WriteTo(&buf))
	assert.True(t, l.V(3).Enabled())
	assert.False(t, l.V(4).Enabled())
	l.V(3).Info("v3")
	l.Error(nil, "no stack below panic")
	require.NoError(t, Close(l))
	ls := lines(t, buf.String())
	require.Len(t, ls, 2, buf.String())
	_, isNumber := ls[0]["time"].(float64)
	assert.True(t, isNumber, "nanos time encoding: %v", ls[0]["time"])
	assert.NotContains(t, ls[1], "stacktrace")
}

func TestDropInHandlerOptions(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf lockedBuffer
	l, h := NewWithHandler(WriteTo(&buf), func(o *Options) {
		o.HandlerOptions = &asyncbus.Options{Capacity: 1 << 16, LoggerKey: "component"}
		o.AddSource = true
		o.LoggerOptions = []Option{ErrorKey("err")}
		o.Encoding = EncodingLogfmt
	})
	l.WithName("x").Error(errors.New("boom"), "m")
	require.NoError(t, h.Close())
	out := buf.String()
	assert.Contains(t, out, "component=x")
	assert.Contains(t, out, "err=boom")
	assert.Contains(t, out, "asyncbus_test.go:")
}

func TestFormatOf(t *testing.T) {
	for enc, want := range map[string]asyncbus.Format{
		"json": asyncbus.JSON, "console": asyncbus.Console, "text": asyncbus.Text, "logfmt": asyncbus.Logfmt, "bogus": asyncbus.JSON,
	} {
		assert.Equal(t, want, formatOf(enc), enc)
	}
}

func TestChainReplace(t *testing.T) {
	first := func(_ []string, a slog.Attr) slog.Attr { a.Key += "1"; return a }
	second := func(_ []string, a slog.Attr) slog.Attr { a.Key += "2"; return a }
	assert.Equal(t, "k1", chainReplace(first, nil)(nil, slog.Int("k", 0)).Key)
	assert.Equal(t, "k12", chainReplace(first, second)(nil, slog.Int("k", 0)).Key)
}

var _ io.Writer = (*lockedBuffer)(nil)
