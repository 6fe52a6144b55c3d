package zap

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/syncbuf"
	"github.com/asyncbus/asyncbus/logrbridge"
)

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var res []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		res = append(res, m)
	}
	return res
}

// fakeObject stands in for a Kubernetes object: runtime.Object's two
// methods and object metadata.
type fakeObject struct {
	Namespace, Name string
	Spec            string
	gvk             fakeGVK
}

type fakeGVK struct{ Group, Version, Kind string }

type fakeObjectKind interface{ GroupVersionKind() fakeGVK }

type fakeTypeMeta struct{ gvk fakeGVK }

func (m *fakeTypeMeta) GroupVersionKind() fakeGVK { return m.gvk }

func (o *fakeObject) GetName() string               { return o.Name }
func (o *fakeObject) GetNamespace() string          { return o.Namespace }
func (o *fakeObject) GetObjectKind() fakeObjectKind { return &fakeTypeMeta{o.gvk} }
func (o *fakeObject) DeepCopyObject() *fakeObject   { c := *o; return &c }
func (o *fakeObject) String() string                { return "&Object{" + o.Name + " " + o.Spec + "}" }
func (o *fakeObject) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"spec": o.Spec})
}
func (o *fakeObject) unused() (string, string, error) { return "", "", nil }

var _ = (*fakeObject).unused

func TestProductionOutput(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	l, h := NewWithHandler(WriteTo(&buf))
	assert.True(t, l.Enabled())
	assert.False(t, l.V(1).Enabled())
	l.WithName("setup").Info("hello", "pod", &fakeObject{Namespace: "ns", Name: "p", Spec: "big"},
		"typed", &fakeObject{Name: "q", gvk: fakeGVK{"apps", "v1", "Deployment"}}, "core", &fakeObject{Name: "r", gvk: fakeGVK{"", "v1", "Pod"}})
	l.Error(errors.New("boom"), "failed", "k", "v")
	require.NoError(t, h.Close())
	ls := jsonLines(t, buf.String())
	require.Len(t, ls, 2, buf.String())
	assert.Equal(t, "info", ls[0]["level"])
	assert.Equal(t, "setup", ls[0]["logger"])
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$`, ls[0]["ts"], "controller-runtime's default RFC 3339 time")
	assert.Equal(t, map[string]any{"namespace": "ns", "name": "p"}, ls[0]["pod"])
	assert.Equal(t, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "q"}, ls[0]["typed"])
	assert.Equal(t, map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "r"}, ls[0]["core"])
	assert.NotContains(t, ls[0], "stacktrace")
	assert.NotContains(t, ls[0], "caller", "no caller unless AddCaller")
	assert.Contains(t, buf.String(), `"msg":"failed","k":"v","error":"boom","stacktrace":"github.com/asyncbus/asyncbus/logrbridge/zap.TestProductionOutput\n\t`, "zapr's order: values, error, then the stack")
	assert.Contains(t, buf.String(), `{"namespace":"ns","name":"p"}`, "controller-runtime's key order")
	assert.Zero(t, h.Stats().Dropped)
}

func TestDevelopmentOutput(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	l := New(UseDevMode(true), WriteTo(&buf))
	assert.True(t, l.V(1).Enabled())
	assert.False(t, l.V(2).Enabled())
	l.WithName("ctrl").WithValues("a", 1).V(1).Info("debugging", "pod", &fakeObject{Namespace: "ns", Name: "p", Spec: "big"})
	slog.New(logr.ToSlogHandler(l)).Warn("warned")
	require.NoError(t, logrbridge.Close(l))
	ls := strings.Split(buf.String(), "\n")
	require.GreaterOrEqual(t, len(ls), 3, buf.String())
	assert.Regexp(t, `^\S+\tDEBUG\tctrl\tdebugging\t\{"a": 1, "pod": "&Object\{p big\}"\}$`, ls[0], "development logs objects in full (their String)")
	assert.Regexp(t, `^\S+\tWARN\twarned$`, ls[1])
	assert.Equal(t, "github.com/asyncbus/asyncbus/logrbridge/zap.TestDevelopmentOutput", ls[2], "stack trace at Warn on the following lines")
	assert.NotContains(t, buf.String(), "runtime.goexit")
}

func TestFromFlags(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	opts := Options{}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	opts.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--zap-log-level=3", "--zap-time-encoding=nanos", "--zap-stacktrace-level=panic", "--zap-encoder=json", "--zap-devel"}))
	l := New(UseFlagOptions(&opts), WriteTo(&buf))
	assert.True(t, l.V(3).Enabled())
	assert.False(t, l.V(4).Enabled())
	l.V(3).Info("v3")
	l.V(1).Info("v1")
	l.Error(nil, "no stack below panic")
	require.NoError(t, logrbridge.Close(l))
	ls := jsonLines(t, buf.String())
	require.Len(t, ls, 3, buf.String())
	_, isNumber := ls[0]["ts"].(float64)
	assert.True(t, isNumber, "nanos time encoding: %v", ls[0]["ts"])
	assert.Equal(t, "Level(-3)", ls[0]["level"])
	assert.Equal(t, "debug", ls[1]["level"])
	assert.NotContains(t, ls[2], "stacktrace")
	assert.NotContains(t, ls[2], "error", "a nil error is not written")
}

func TestConsoleTimeEncoding(t *testing.T) {
	var buf syncbuf.Buffer
	opts := Options{}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	opts.BindFlags(fs)
	require.NoError(t, fs.Parse([]string{"--zap-encoder=console", "--zap-time-encoding=epoch"}))
	l := New(UseFlagOptions(&opts), WriteTo(&buf))
	l.Info("m")
	require.NoError(t, logrbridge.Close(l))
	assert.Regexp(t, `^\d\.\d+e\+09\tINFO\tm\n$`, buf.String())
}

func TestTimeEncoderOfLayout(t *testing.T) {
	assert.Equal(t, RFC3339TimeEncoder, TimeEncoderOfLayout("2006-01-02T15:04:05Z07:00"))
	assert.Equal(t, ISO8601TimeEncoder, TimeEncoderOfLayout("2006-01-02T15:04:05.000Z0700"))
	assert.Equal(t, RFC3339NanoTimeEncoder, TimeEncoderOfLayout("2006-01-02T15:04:05.999999999Z07:00"))
	var buf syncbuf.Buffer
	l := New(WriteTo(&buf), JSONEncoder(func(c *EncoderConfig) { c.EncodeTime = TimeEncoderOfLayout("2006/01/02 15h") }))
	l.Info("m")
	require.NoError(t, logrbridge.Close(l))
	assert.Regexp(t, `^\{"level":"info","ts":"\d{4}/\d\d/\d\d \d\dh","msg":"m"\}\n$`, buf.String())
}

func TestCallerAndCallerSkip(t *testing.T) {
	var buf syncbuf.Buffer
	l := New(WriteTo(&buf), RawZapOpts(AddCaller()))
	l.Info("here")
	skipping := New(WriteTo(&buf), RawZapOpts(AddCaller(), AddCallerSkip(1)))
	helper := func() { skipping.Info("skipped") }
	helper()
	require.NoError(t, logrbridge.Close(l))
	require.NoError(t, logrbridge.Close(skipping))
	ls := jsonLines(t, buf.String())
	require.Len(t, ls, 2)
	assert.Regexp(t, `^zap/zap_test.go:\d+$`, ls[0]["caller"])
	assert.Regexp(t, `^zap/zap_test.go:\d+$`, ls[1]["caller"])
	assert.NotEqual(t, ls[0]["caller"], ls[1]["caller"], "AddCallerSkip(1) reports the helper's caller")
	assert.Regexp(t, regexp.MustCompile(`"caller":"zap/zap_test.go:\d+","msg":"here"`), buf.String())
}

func TestHandlerAndLoggerOptions(t *testing.T) {
	defer goleak.VerifyNone(t)
	var buf syncbuf.Buffer
	l, h := NewWithHandler(WriteTo(&buf), func(o *Options) {
		o.HandlerOptions = &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 1 << 16}, Format: asyncbus.Logfmt}
		o.LoggerOptions = []logrbridge.Option{logrbridge.ErrorKey("err")}
	})
	l.WithName("x").Error(errors.New("boom"), "m")
	require.NoError(t, h.Close())
	ls := jsonLines(t, buf.String())
	require.Len(t, ls, 1)
	assert.Equal(t, "x", ls[0]["logger"], "the format comes from the encoder, not HandlerOptions")
	assert.Equal(t, "boom", ls[0]["err"])
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		name             string
		in               Options
		enc              Encoding
		level, stackLvl  slog.Level
		keepsGivenWriter bool
	}{
		{"production", Options{}, NewJSONEncoder(), InfoLevel, ErrorLevel, false},
		{"development", Options{Development: true}, NewConsoleEncoder(), DebugLevel, WarnLevel, false},
		{"time", Options{TimeEncoder: EpochTimeEncoder}, NewJSONEncoder(func(c *EncoderConfig) { c.EncodeTime = EpochTimeEncoder }), InfoLevel, ErrorLevel, false},
		{"explicit", Options{Development: true, NewEncoder: NewJSONEncoder, Level: WarnLevel, StacktraceLevel: ErrorLevel, DestWriter: io.Discard},
			NewJSONEncoder(), WarnLevel, ErrorLevel, true},
		{"encoder wins over TimeEncoder", Options{Encoder: NewConsoleEncoder(), TimeEncoder: EpochTimeEncoder}, NewConsoleEncoder(), InfoLevel, ErrorLevel, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.in
			stderr := &syncbuf.Buffer{}
			o.addDefaults(stderr)
			assert.Equal(t, tc.enc, o.Encoder)
			assert.Equal(t, tc.level, o.Level.Level())
			assert.Equal(t, tc.stackLvl, o.StacktraceLevel.Level())
			if tc.keepsGivenWriter {
				assert.Equal(t, io.Discard, o.DestWriter)
			} else {
				assert.Same(t, stderr, o.DestWriter)
			}
		})
	}
}

func TestFunctionalOpts(t *testing.T) {
	in := &Options{Development: true, Encoder: NewJSONEncoder()}
	o := &Options{}
	for _, f := range []Opts{UseDevMode(false), WriteTo(io.Discard), ConsoleEncoder(), Level(slog.Level(-3)), StacktraceLevel(ErrorLevel), RawZapOpts(AddCaller())} {
		f(o)
	}
	assert.False(t, o.Development)
	assert.Equal(t, io.Discard, o.DestWriter)
	assert.Equal(t, NewConsoleEncoder(), o.Encoder)
	assert.Equal(t, slog.Level(-3), o.Level.Level())
	assert.Equal(t, ErrorLevel, o.StacktraceLevel.Level())
	assert.Len(t, o.ZapOpts, 1)
	JSONEncoder()(o)
	assert.Equal(t, NewJSONEncoder(), o.Encoder)
	Encoder(NewConsoleEncoder())(o)
	assert.Equal(t, NewConsoleEncoder(), o.Encoder)
	UseFlagOptions(in)(o)
	assert.Equal(t, *in, *o)
}

func TestEncodingFormats(t *testing.T) {
	f, layout := NewConsoleEncoder(func(c *EncoderConfig) { c.EncodeTime = ISO8601TimeEncoder }).format()
	assert.Equal(t, encode.ZapConsole.WithZapTime(encode.ZapTimeISO8601).WithZapLevels().WithLogrLevels(), f)
	assert.Empty(t, layout)
	f, layout = NewJSONEncoder(func(c *EncoderConfig) { c.EncodeTime = TimeEncoderOfLayout("15:04") }).format()
	assert.Equal(t, encode.ZapJSON.WithZapLevels().WithLogrLevels(), f)
	assert.Equal(t, "15:04", layout)
}

func TestKubeObjectFieldIgnoresOthers(t *testing.T) {
	for _, v := range []any{"s", 1, struct{ Name string }{"n"}, (*objectMetaOnly)(nil), &objectMetaOnly{}, errors.New("e")} {
		_, ok := kubeObjectField("k", v)
		assert.False(t, ok, "%T", v)
	}
}

// objectMetaOnly has object metadata but is no runtime.Object.
type objectMetaOnly struct{}

func (*objectMetaOnly) GetName() string      { return "n" }
func (*objectMetaOnly) GetNamespace() string { return "ns" }

// verboseError formats itself with more detail under %+v, like pkg/errors.
type verboseError struct{ msg string }

func (e verboseError) Error() string { return e.msg }
func (e verboseError) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		_, _ = io.WriteString(s, e.msg+"\ndetail")
		return
	}
	_, _ = io.WriteString(s, e.msg)
}
func (e verboseError) String() string { return "stringer " + e.msg }

func TestErrorVerbose(t *testing.T) {
	var buf syncbuf.Buffer
	l := New(WriteTo(&buf), StacktraceLevel(PanicLevel))
	l.Error(verboseError{"boom"}, "failed", "cause", verboseError{"inner"})
	require.NoError(t, logrbridge.Close(l))
	assert.Contains(t, buf.String(), `"msg":"failed","cause":"inner","causeVerbose":"inner\ndetail","error":"boom","errorVerbose":"boom\ndetail"}`)
}

// valueStringer has a value receiver: a nil *valueStringer panics in the
// method wrapper the compiler makes for the pointer type.
type valueStringer struct{ n int }

func (v valueStringer) String() string { return fmt.Sprint("n=", v.n) }

type panicStringer struct{}

func (panicStringer) String() string { panic("boom") }

type panicMarshaler struct{}

func (panicMarshaler) MarshalLog() any { panic("mboom") }

// ptrError dereferences its receiver without a nil check.
type ptrError struct{ msg string }

func (e *ptrError) Error() string { return e.msg }

// TestValuesFollowZap checks the values whose methods panic or are called
// on nil pointers against what controller-runtime's zap writes for them
// (integration's TestDropInValuesMatchControllerRuntime compares with zap
// itself), in both encodings and both through the log call and
// WithValues.
func TestValuesFollowZap(t *testing.T) {
	kv := []any{
		"s", (*valueStringer)(nil),
		"p", panicStringer{},
		"m", panicMarshaler{},
		"e", (*ptrError)(nil),
		"obj", (*fakeObject)(nil),
	}
	for _, tc := range []struct {
		name string
		opts []Opts
		want string
	}{
		{"production", nil, `"msg":"m","s":"<nil>","pError":"PANIC=boom","mError":"PANIC=mboom","e":"<nil>","obj":{},"objError":"got nil for runtime.Object","err":"<nil>"}`},
		{"production console", []Opts{ConsoleEncoder()}, "\tm\t" + `{"s": "<nil>", "pError": "PANIC=boom", "mError": "PANIC=mboom", "e": "<nil>", "obj": {}, "objError": "got nil for runtime.Object", "err": "<nil>"}`},
		{"development", []Opts{UseDevMode(true)}, "\tm\t" + `{"s": "<nil>", "pError": "PANIC=boom", "mError": "PANIC=mboom", "e": "<nil>", "obj": "<nil>", "err": "<nil>"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []string{"Info", "WithValues"} {
				var buf syncbuf.Buffer
				l := New(append(tc.opts, WriteTo(&buf))...)
				require.NotPanics(t, func() {
					if via == "Info" {
						l.Info("m", append(kv, "err", (*ptrError)(nil))...)
					} else {
						l.WithValues(kv...).Info("m", "err", (*ptrError)(nil))
					}
				})
				require.NoError(t, logrbridge.Close(l))
				assert.True(t, strings.HasSuffix(strings.TrimSuffix(buf.String(), "\n"), tc.want), "%s:\n%s", via, buf.String())
			}
		})
	}
}

func TestErrorWithNilPointerError(t *testing.T) {
	var buf syncbuf.Buffer
	l := New(WriteTo(&buf), StacktraceLevel(PanicLevel))
	l.Error((*ptrError)(nil), "failed")
	require.NoError(t, logrbridge.Close(l))
	assert.Equal(t, "<nil>", jsonLines(t, buf.String())[0]["error"], "zap's encodeError")
}

// TestVLevelsAbove127 checks zapr's cap: V(n) for n > 127 is V(127), so
// the lowest level zap can express (-127, --zap-log-level=127) enables
// them, and they are named Level(-127).
func TestVLevelsAbove127(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Opts
		level slog.Level
		v     int
		want  string // the start of the line after the time; "" when disabled
	}{
		{"V(200) at -127", nil, -127, 200, `{"level":"Level(-127)"`},
		{"V(127) at -127", nil, -127, 127, `{"level":"Level(-127)"`},
		{"V(200) at -126", nil, -126, 200, ""},
		{"V(126) at -126", nil, -126, 126, `{"level":"Level(-126)"`},
		{"console V(1000) at -127", []Opts{ConsoleEncoder()}, -127, 1000, "LEVEL(-127)\tm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			l := New(append(tc.opts, WriteTo(&buf), Level(tc.level))...)
			assert.Equal(t, tc.want != "", l.V(tc.v).Enabled())
			l.V(tc.v).Info("m")
			require.NoError(t, logrbridge.Close(l))
			if tc.want == "" {
				assert.Empty(t, buf.String())
				return
			}
			assert.Contains(t, buf.String(), tc.want)
		})
	}
}
