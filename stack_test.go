package asyncbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stackLines logs one Error record through a handler with opts and returns
// the output lines, plus the line number of the logging call.
func logForStack(t *testing.T, opts *Options, log func(*slog.Logger)) []string {
	t.Helper()
	var sink memSink
	h := NewHandler(&sink, opts)
	log(slog.New(h))
	require.NoError(t, h.Close())
	return sink.Lines()
}

// thisLine returns the caller's file and line.
func thisLine() (string, int) {
	_, file, line, _ := runtime.Caller(1)
	return file, line
}

// jsonStack decodes line and returns its "stacktrace" frames as
// (function, "file:line") pairs.
func jsonStack(t *testing.T, line string) [][2]string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(line), &m), line)
	st, ok := m[stackTraceKey].(string)
	require.True(t, ok, "no string stacktrace in %s", line)
	return splitStack(t, st)
}

// splitStack checks zap's layout, "func\n\tfile:line" per frame joined by
// "\n", and returns the frames.
func splitStack(t *testing.T, st string) [][2]string {
	t.Helper()
	lines := strings.Split(st, "\n")
	require.Zero(t, len(lines)%2, "pairs of lines: %q", st)
	var frames [][2]string
	for i := 0; i < len(lines); i += 2 {
		fn, loc := lines[i], lines[i+1]
		require.NotEmpty(t, fn)
		require.False(t, strings.HasPrefix(fn, "\t"), "function line %q", fn)
		require.True(t, strings.HasPrefix(loc, "\t"), "location line %q", loc)
		colon := strings.LastIndexByte(loc, ':')
		require.Positive(t, colon, loc)
		_, err := strconv.Atoi(loc[colon+1:])
		require.NoError(t, err, loc)
		assert.NotEqual(t, "runtime.goexit", fn, "no goroutine entry frame")
		frames = append(frames, [2]string{fn, loc[1:]})
	}
	return frames
}

const thisTest = "github.com/asyncbus/asyncbus.TestStackTrace"

func TestStackTraceOffByDefault(t *testing.T) {
	lines := logForStack(t, nil, func(l *slog.Logger) { l.Error("boom") })
	require.Len(t, lines, 1)
	assert.NotContains(t, lines[0], stackTraceKey)
}

func TestStackTraceFirstFrameIsTheCaller(t *testing.T) {
	var file string
	var line int
	lines := logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelWarn}}, func(l *slog.Logger) {
		l.Info("below the level")
		file, line = thisLine()
		l.Warn("at the level", "k", 1)
		l.Error("above the level")
	})
	require.Len(t, lines, 3)
	assert.NotContains(t, lines[0], stackTraceKey)
	frames := jsonStack(t, lines[1])
	assert.Equal(t, thisTest+"FirstFrameIsTheCaller.func1", frames[0][0])
	assert.Equal(t, fmt.Sprintf("%s:%d", file, line+1), frames[0][1])
	assert.Equal(t, "github.com/asyncbus/asyncbus.logForStack", frames[1][0], "then the frames that led to the call")
	assert.Equal(t, thisTest+"FirstFrameIsTheCaller", frames[2][0])
	for _, f := range frames {
		assert.False(t, strings.HasPrefix(f[0], "log/slog."), "slog frame %s", f[0])
	}
	assert.Contains(t, lines[1], `"msg":"at the level","stacktrace":"`, "the stack is a top-level field, before the attributes")
	jsonStack(t, lines[2])
}

// TestStackTraceAtTopLevelUnderWithGroup: a record logged through
// WithGroup gets its stack trace at the top level, where zap and records
// without groups have it, never inside the group, in every format; after
// the Context fields.
func TestStackTraceAtTopLevelUnderWithGroup(t *testing.T) {
	hook := func(_ context.Context, w *FieldWriter) { w.AddString("trace_id", "t1") }
	for _, f := range []Format{JSON, Text, Logfmt, Console, ZapJSON, ZapConsole, GCPJSON} {
		for _, hooked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/hook=%v", f, hooked), func(t *testing.T) {
				opts := &Options{Format: f, Encoding: EncodingOptions{Color: ColorNever}, Features: FeatureOptions{StackTraceLevel: slog.LevelError}}
				if hooked {
					opts.Features.Context = hook
				}
				lines := logForStack(t, opts, func(l *slog.Logger) {
					l.With("w", 1).WithGroup("req").Error("boom", "id", 7)
				})
				switch f {
				case Console, ZapConsole:
					require.Greater(t, len(lines), 2)
					assert.NotContains(t, lines[0], stackTraceKey)
					assert.Equal(t, thisTest+"AtTopLevelUnderWithGroup.func2.1", lines[1], "the stack on the lines below")
					splitStack(t, strings.Join(lines[1:], "\n"))
					return
				}
				require.Len(t, lines, 1)
				var m map[string]any
				if f == ZapJSON || f == GCPJSON {
					require.NoError(t, json.Unmarshal([]byte(lines[0]), &m), lines[0])
				} else {
					m = parseLine(t, f, lines[0])
				}
				st, ok := m[stackTraceKey].(string)
				require.True(t, ok, "a top-level stacktrace in %s", lines[0])
				assert.Equal(t, thisTest+"AtTopLevelUnderWithGroup.func2.1", splitStack(t, st)[0][0])
				req, ok := m["req"].(map[string]any)
				require.True(t, ok, "the group in %s", lines[0])
				assert.NotContains(t, req, stackTraceKey)
				assert.Contains(t, req, "id")
				if hooked && f != ZapJSON {
					assert.Less(t, strings.Index(lines[0], "trace_id"), strings.Index(lines[0], stackTraceKey), "after the Context fields")
				}
			})
		}
	}
}

// TestStackTraceFromHandleAttrs: with no record PC (HandleAttrs, as the
// bridges use), the stack starts at the first frame outside slog and this
// module's own code.
func TestStackTraceFromHandleAttrs(t *testing.T) {
	for _, stateful := range []bool{false, true} {
		var sink memSink
		h := NewHandler(&sink, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}})
		var hh slog.Handler = h
		if stateful {
			hh = h.WithAttrs([]slog.Attr{slog.Int("w", 1)})
		}
		_, line := thisLine()
		require.NoError(t, hh.(*Handler).handleAttrs(context.Background(), fixedTime, slog.LevelError, "m", []slog.Attr{slog.Int("a", 1)}))
		require.NoError(t, h.Close())
		frames := jsonStack(t, sink.Lines()[0])
		assert.Equal(t, thisTest+"FromHandleAttrs", frames[0][0])
		assert.True(t, strings.HasSuffix(frames[0][1], ":"+strconv.Itoa(line+1)), frames[0][1])
	}
}

// stackErr is a github.com/pkg/errors-style error: StackTrace() returns a
// slice of a uintptr-kind Frame type.
type stackErr struct {
	msg   string
	stack fakeStackTrace
}

type fakeFrame uintptr
type fakeStackTrace []fakeFrame

func (e *stackErr) Error() string              { return e.msg }
func (e *stackErr) StackTrace() fakeStackTrace { return e.stack }
func newStackErr(msg string) error {
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:]) // from newStackErr's caller, as pkg/errors does
	st := make(fakeStackTrace, n)
	for i := range n {
		st[i] = fakeFrame(pcs[i])
	}
	return &stackErr{msg: msg, stack: st}
}

// callersErr is a github.com/go-errors/errors-style error.
type callersErr struct{ pcs []uintptr }

func (e *callersErr) Error() string      { return "go-errors" }
func (e *callersErr) Callers() []uintptr { return e.pcs }
func newCallersErr() error {
	pcs := make([]uintptr, 32)
	return &callersErr{pcs: pcs[:runtime.Callers(2, pcs)]}
}

func makeErrorHere(kind string) error {
	if kind == "pkg" {
		return newStackErr("inner")
	}
	return newCallersErr()
}

// notAStack has a StackTrace method of another shape: ignored.
type notAStack struct{}

func (notAStack) Error() string        { return "no stack" }
func (notAStack) StackTrace() []string { return []string{"x"} }

func TestStackTraceFromErrors(t *testing.T) {
	const origin = "github.com/asyncbus/asyncbus.makeErrorHere"
	cases := []struct {
		name string
		err  error
		want string // first frame's function
	}{
		{"pkg/errors style", makeErrorHere("pkg"), origin},
		{"go-errors style", makeErrorHere("go"), origin},
		{"wrapped with %w", fmt.Errorf("outer: %w", makeErrorHere("pkg")), origin},
		{"in errors.Join", errors.Join(errors.New("plain"), fmt.Errorf("w: %w", makeErrorHere("go"))), origin},
		{"innermost wins", &wrapStack{inner: makeErrorHere("pkg"), stack: newStackErr("outer").(*stackErr).stack}, origin},
		{"no stack in chain", fmt.Errorf("w: %w", notAStack{}), thisTest + "FromErrors.func1.1"},
		{"nil pointer StackTrace panics", (*panicStack)(nil), thisTest + "FromErrors.func1.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
				l.Error("failed", "n", 1, slog.Group("g", "err", c.err))
			})
			require.Len(t, lines, 1)
			frames := jsonStack(t, lines[0])
			assert.Equal(t, c.want, frames[0][0])
		})
	}
	// Below the level, neither kind of stack is written.
	lines := logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
		l.Warn("w", "err", makeErrorHere("pkg"))
	})
	assert.NotContains(t, lines[0], stackTraceKey)
}

// wrapStack carries a stack and wraps an error that carries another.
type wrapStack struct {
	inner error
	stack fakeStackTrace
}

func (e *wrapStack) Error() string              { return "wrap: " + e.inner.Error() }
func (e *wrapStack) Unwrap() error              { return e.inner }
func (e *wrapStack) StackTrace() fakeStackTrace { return e.stack }

// panicStack's StackTrace dereferences a nil receiver.
type panicStack struct{ s fakeStackTrace }

func (e *panicStack) Error() string              { return "panics" }
func (e *panicStack) StackTrace() fakeStackTrace { return e.s }

func TestStackTraceEveryFormat(t *testing.T) {
	for _, f := range []Format{Text, Logfmt, Console, ZapJSON, ZapConsole} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			lines := logForStack(t, &Options{Format: f, Encoding: EncodingOptions{Color: ColorNever}, Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
				l.Error("boom", "k", "v")
			})
			switch f {
			case Console, ZapConsole:
				// zap's console layout: the record, then the stack on the
				// following lines.
				require.Greater(t, len(lines), 2)
				assert.Contains(t, lines[0], "boom")
				assert.NotContains(t, lines[0], stackTraceKey)
				splitStack(t, strings.Join(lines[1:], "\n"))
				assert.Equal(t, thisTest+"EveryFormat.func1.1", lines[1])
			case ZapJSON:
				require.Len(t, lines, 1)
				frames := jsonStack(t, lines[0])
				assert.Equal(t, thisTest+"EveryFormat.func1.1", frames[0][0])
				assert.Contains(t, lines[0], `"k":"v","stacktrace":"`)
			default:
				require.Len(t, lines, 1)
				assert.Contains(t, lines[0], `stacktrace="`+thisTest+`EveryFormat.func1.1\n\t`)
			}
		})
	}
}

// TestStackTraceNotDuplicated: a record that already carries a stack trace
// (logrbridge's StackTraces) keeps it and gets no second one.
func TestStackTraceNotDuplicated(t *testing.T) {
	lines := logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
		l.Error("boom", stackTraceKey, "mine")
	})
	assert.Equal(t, 1, strings.Count(lines[0], stackTraceKey), lines[0])
	assert.Contains(t, lines[0], `"stacktrace":"mine"`)
}

func TestStackTraceOffAllocatesNothing(t *testing.T) {
	h := NewHandler(io.Discard, &Options{Features: FeatureOptions{StackTraceLevel: nil}})
	defer h.Close()
	r := slog.NewRecord(fixedTime, slog.LevelError, "m", 0)
	r.AddAttrs(slog.Any("err", errors.New("e")))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h.Handle(context.Background(), r) }))
	h2 := NewHandler(io.Discard, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}})
	defer h2.Close()
	r2 := recordAt(1)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = h2.Handle(context.Background(), r2) }), "on, below the level")
}

// BenchmarkStackTrace is the cost of Options.Features.StackTraceLevel on Info
// records through a slog.Logger into io.Discard: off (nil), on but above
// the records' level, and on (a stack per record).
func BenchmarkStackTrace(b *testing.B) {
	for _, c := range []struct {
		name  string
		level slog.Leveler
	}{{"off", nil}, {"on-below-level", slog.LevelError}, {"on", slog.LevelInfo}} {
		b.Run(c.name, func(b *testing.B) {
			h := NewHandler(io.Discard, &Options{Features: FeatureOptions{StackTraceLevel: c.level}})
			defer h.Close()
			l := slog.New(h)
			b.ReportAllocs()
			for b.Loop() {
				l.Info("request handled", "seq", 1, "path", "/api/v1/users/12345/orders")
			}
		})
	}
}

// forkErr branches at every level: Unwrap() []error returns two children,
// so an error chain of depth 24 has 2^24 paths (and one of depth 100,
// 2^100). unwraps counts the Unwrap calls of the whole tree.
type forkErr struct {
	depth   int
	unwraps *int
}

func (e *forkErr) Error() string { return "fork" }
func (e *forkErr) Unwrap() []error {
	*e.unwraps++
	if e.depth == 0 {
		return nil
	}
	c := &forkErr{e.depth - 1, e.unwraps}
	return []error{c, c}
}

// TestStackTraceForkedErrorChain (review finding 3): an error chain that
// branches costs the logging call bounded work, and the record is written
// with the logging call's stack.
func TestStackTraceForkedErrorChain(t *testing.T) {
	for _, depth := range []int{24, 100} {
		t.Run(strconv.Itoa(depth), func(t *testing.T) {
			unwraps := 0
			lines := logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
				l.Error("x", "err", &forkErr{depth, &unwraps})
			})
			require.Len(t, lines, 1)
			assert.Equal(t, thisTest+"ForkedErrorChain.func1.1", jsonStack(t, lines[0])[0][0])
			assert.Positive(t, unwraps)
			assert.LessOrEqual(t, unwraps, 256, "the chain walk visits a bounded number of errors in all")
		})
	}
}

// panicCallers is a go-errors-style error whose Callers panics.
type panicCallers struct{}

func (panicCallers) Error() string      { return "pc" }
func (panicCallers) Callers() []uintptr { panic("boom") }

// TestStackTracePanickingCallers (review finding 4): a Callers method that
// panics does not crash the logging call; the record is written with the
// logging call's stack.
func TestStackTracePanickingCallers(t *testing.T) {
	var lines []string
	require.NotPanics(t, func() {
		lines = logForStack(t, &Options{Features: FeatureOptions{StackTraceLevel: slog.LevelError}}, func(l *slog.Logger) {
			l.Error("x", "err", error(panicCallers{}))
		})
	})
	require.Len(t, lines, 1)
	assert.Equal(t, thisTest+"PanickingCallers.func1.1", jsonStack(t, lines[0])[0][0])
}
