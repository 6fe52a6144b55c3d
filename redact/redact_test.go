package redact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/redact"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus/internal/syncbuf"
)

const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

func TestMatchers(t *testing.T) {
	tests := []struct {
		name string
		m    redact.Matcher
		in   string
		want string // the matched span, "" for none
	}{
		{"bearer", redact.BearerToken, "Bearer abc.DEF-123", "abc.DEF-123"},
		{"bearer lower, padding", redact.BearerToken, "auth: bearer  dG9rZW4==, next", "dG9rZW4=="},
		{"bearer upper", redact.BearerToken, "BEARER x/y+z~", "x/y+z~"},
		{"bearer no token", redact.BearerToken, "Bearer ", ""},
		{"bearer no space", redact.BearerToken, "Bearerabc", ""},
		{"bearer inside word", redact.BearerToken, "forbearer abc", ""},
		{"bearer word only", redact.BearerToken, "the bearer", ""},
		{"jwt", redact.JWT, "token=" + jwt + " rest", jwt},
		{"jwt unsecured", redact.JWT, "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0."},
		{"jwt two segments", redact.JWT, "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0", ""},
		{"jwt empty payload", redact.JWT, "eyJhbGci..sig", ""},
		{"jwt not at word start", redact.JWT, "xeyJa.b.c", ""},
		{"jwt plain", redact.JWT, "nothing here", ""},
		{"regexp", redact.Regexp(regexp.MustCompile(`\d{4}-\d{4}`)), "card 1234-5678 ok", "1234-5678"},
		{"regexp none", redact.Regexp(regexp.MustCompile(`\d{4}-\d{4}`)), "card", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, e := tc.m(tc.in)
			if tc.want == "" {
				assert.Equal(t, -1, s)
				return
			}
			require.GreaterOrEqual(t, s, 0)
			assert.Equal(t, tc.want, tc.in[s:e])
		})
	}
}

func TestReplaceAttr(t *testing.T) {
	r := redact.New(redact.Config{
		Keys:   []string{"password", "Secret"},
		Paths:  []string{"req.headers.authorization", "db.creds"},
		Values: []redact.Matcher{redact.BearerToken, redact.JWT, nil, redact.Regexp(regexp.MustCompile(`sk_live_\w+`))},
	})
	tests := []struct {
		name   string
		groups []string
		in     slog.Attr
		want   slog.Value
		counts bool
	}{
		{"key", nil, slog.String("password", "hunter2"), slog.StringValue("[REDACTED]"), true},
		{"key any case", nil, slog.String("PassWord", "hunter2"), slog.StringValue("[REDACTED]"), true},
		{"config key case", nil, slog.Int("secret", 42), slog.StringValue("[REDACTED]"), true},
		{"key at depth", []string{"a", "b"}, slog.String("password", "x"), slog.StringValue("[REDACTED]"), true},
		{"key names a group", []string{"a", "Password"}, slog.String("x", "y"), slog.StringValue("[REDACTED]"), true},
		{"other key", nil, slog.String("user", "ann"), slog.StringValue("ann"), false},
		{"path", []string{"req", "headers"}, slog.String("Authorization", "Basic x"), slog.StringValue("[REDACTED]"), true},
		{"path at wrong depth", []string{"headers"}, slog.String("authorization", "Basic x"), slog.StringValue("Basic x"), false},
		{"path deeper than attr", []string{"req"}, slog.String("headers", "x"), slog.StringValue("x"), false},
		{"path names a group", []string{"db", "creds", "x"}, slog.String("user", "u"), slog.StringValue("[REDACTED]"), true},
		{"path other branch", []string{"db", "conn"}, slog.String("creds", "u"), slog.StringValue("u"), false},
		{"bearer value", []string{"req", "headers"}, slog.String("x-auth", "Bearer abc"), slog.StringValue("Bearer [REDACTED]"), true},
		{"two jwts", nil, slog.String("s", jwt+" and "+jwt), slog.StringValue("[REDACTED] and [REDACTED]"), true},
		{"custom pattern and bearer", nil, slog.String("s", "k=sk_live_abc, Bearer t"), slog.StringValue("k=[REDACTED], Bearer [REDACTED]"), true},
		{"error message", nil, slog.Any("err", errors.New("GET failed: Bearer tok")), slog.StringValue("GET failed: Bearer [REDACTED]"), true},
		{"clean error kept as is", nil, slog.Any("err", errNotFound), slog.AnyValue(errNotFound), false},
		{"nil error", nil, slog.Any("err", error(nil)), slog.AnyValue(nil), false},
		{"int not inspected", nil, slog.Int("n", 1), slog.IntValue(1), false},
		{"msg", nil, slog.String(slog.MessageKey, "login with Bearer tok"), slog.StringValue("login with Bearer [REDACTED]"), true},
		{"log valuer resolved", nil, slog.Any("v", valuer{"Bearer t"}), slog.StringValue("Bearer [REDACTED]"), true},
		{"log valuer by key", nil, slog.Any("password", valuer{"x"}), slog.StringValue("[REDACTED]"), true},
	}
	var want uint64
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.ReplaceAttr(tc.groups, tc.in)
			assert.Equal(t, tc.in.Key, got.Key)
			assert.True(t, tc.want.Equal(got.Value), "want %v, got %v", tc.want, got.Value)
			if tc.counts {
				want++
			}
			assert.Equal(t, want, r.Redactions())
		})
	}
}

var errNotFound = errors.New("not found")

type valuer struct{ s string }

func (v valuer) LogValue() slog.Value { return slog.StringValue(v.s) }

func TestMaskAndThen(t *testing.T) {
	r := redact.New(redact.Config{Keys: []string{"pw"}, Mask: "***"})
	drop := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "drop" {
			return slog.Attr{}
		}
		a.Key = strings.ToUpper(a.Key)
		return a
	}
	f := r.Then(drop)
	got := f(nil, slog.String("pw", "x"))
	assert.Equal(t, "PW", got.Key, "next runs after redaction")
	assert.Equal(t, "***", got.Value.String())
	assert.True(t, f(nil, slog.String("drop", "x")).Equal(slog.Attr{}))
	assert.Equal(t, uint64(1), r.Redactions())
	assert.Equal(t, "***", r.Then(nil)(nil, slog.String("pw", "y")).Value.String())
}

func TestNothingConfigured(t *testing.T) {
	r := redact.New(redact.Config{})
	a := slog.String("password", "Bearer x")
	assert.True(t, a.Equal(r.ReplaceAttr([]string{"g"}, a)))
	assert.Zero(t, r.Redactions())
}

// logBoth logs the same calls through slog's JSON handler and an asyncbus
// JSON handler, each with its own Redactor, and returns both outputs and
// both redaction counts.
func logBoth(t *testing.T, cfg redact.Config, log func(*slog.Logger)) (ref, got string, refN, gotN uint64) {
	t.Helper()
	rRef, rGot := redact.New(cfg), redact.New(cfg)
	var refBuf bytes.Buffer
	log(slog.New(slog.NewJSONHandler(&refBuf, &slog.HandlerOptions{ReplaceAttr: rRef.Then(noTime)})))
	var gotBuf syncbuf.Buffer
	h := asyncbus.NewHandler(&gotBuf, &asyncbus.Options{ReplaceAttr: rGot.Then(noTime)})
	log(slog.New(h))
	require.NoError(t, h.Close())
	return refBuf.String(), gotBuf.String(), rRef.Redactions(), rGot.Redactions()
}

func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

var refConfig = redact.Config{
	Keys:   []string{"password", "token"},
	Paths:  []string{"req.headers.authorization", "session"},
	Values: []redact.Matcher{redact.BearerToken, redact.JWT},
}

// TestAgainstSlogJSON: nested groups, WithGroup paths, LogValuers and
// WithAttrs state redact exactly as slog.NewJSONHandler with the same
// ReplaceAttr, and count the same.
func TestAgainstSlogJSON(t *testing.T) {
	ref, got, refN, gotN := logBoth(t, refConfig, func(l *slog.Logger) {
		l.Info("plain", "password", "p", "user", "ann")
		l.Info("nested", slog.Group("req", slog.Group("headers", "Authorization", "Basic x", "Accept", "*/*"), "path", "/"))
		l.WithGroup("req").WithGroup("headers").Info("with groups", "authorization", "Bearer abc", "x", 1)
		l.WithGroup("req").Info("group then attr", slog.Group("headers", "authorization", "t"))
		l.Info("group by key", slog.Group("token", "a", 1, "b", slog.Group("c", "d", "e")))
		l.Info("session group", slog.Group("session", "id", "s1", "user", "ann"), "sessions", 2)
		l.Info("valuer", "v", valuer{"see Bearer tok"}, "token", valuer{"x"}, "g", groupValuer{})
		l.Info("Bearer in msg", "err", errors.New("call with "+jwt+" failed"))
		w := l.With("password", "with-time", slog.Group("req", slog.Group("headers", "authorization", "w")))
		for range 3 {
			w.Info("with attrs", "n", 1)
		}
		l.Info("empty group", slog.Group("token"), slog.Group("g", slog.Group("password")))
	})
	assert.Equal(t, ref, got)
	assert.Equal(t, refN, gotN)
	// 1 plain + 1 nested + 1 with groups + 1 group then attr + 3 group by key
	// + 2 session + 3 valuer + 2 msg/err + 2 WithAttrs (once, not per record).
	assert.Equal(t, uint64(16), gotN)
	assert.Contains(t, got, `{"level":"INFO","msg":"with attrs","password":"[REDACTED]","req":{"headers":{"authorization":"[REDACTED]"}},"n":1}`)
	assert.NotContains(t, got, "hunter")
	for _, secret := range []string{`"p"`, "Basic x", "abc", `"t"`, "s1", "see Bearer tok", jwt, "with-time"} {
		assert.NotContains(t, got, secret)
	}
}

type groupValuer struct{}

func (groupValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("token", "gv"), slog.String("ok", "Bearer q"))
}

// TestRandomAgainstSlogJSON compares random attribute trees.
func TestRandomAgainstSlogJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1))
	keys := []string{"password", "Token", "authorization", "headers", "req", "session", "user", "id", "x"}
	values := []func() slog.Value{
		func() slog.Value { return slog.StringValue("plain") },
		func() slog.Value { return slog.StringValue("Bearer " + fmt.Sprint(rng.IntN(1000))) },
		func() slog.Value { return slog.StringValue("a " + jwt + " b") },
		func() slog.Value { return slog.IntValue(rng.IntN(100)) },
		func() slog.Value { return slog.AnyValue(errors.New("err bearer zz")) },
		func() slog.Value { return slog.AnyValue(valuer{"v Bearer vv"}) },
		func() slog.Value { return slog.BoolValue(true) },
	}
	var gen func(depth int) slog.Attr
	gen = func(depth int) slog.Attr {
		k := keys[rng.IntN(len(keys))]
		if depth < 3 && rng.IntN(3) == 0 {
			n := rng.IntN(4)
			as := make([]any, 0, n)
			for range n {
				as = append(as, gen(depth+1))
			}
			return slog.Group(k, as...)
		}
		return slog.Attr{Key: k, Value: values[rng.IntN(len(values))]()}
	}
	for i := range 300 {
		var calls []func(*slog.Logger)
		for range 1 + rng.IntN(4) {
			var as []any
			for range rng.IntN(5) {
				as = append(as, gen(0))
			}
			var grp string
			if rng.IntN(2) == 0 {
				grp = keys[rng.IntN(len(keys))]
			}
			with := []any{gen(0)}
			calls = append(calls, func(l *slog.Logger) {
				if grp != "" {
					l = l.WithGroup(grp)
				}
				l.With(with...).Info("m", as...)
			})
		}
		ref, got, refN, gotN := logBoth(t, refConfig, func(l *slog.Logger) {
			for _, c := range calls {
				c(l)
			}
		})
		require.Equal(t, ref, got, "case %d", i)
		require.Equal(t, refN, gotN, "case %d", i)
	}
}

// TestConcurrentCount: the counter is exact under concurrent use.
func TestConcurrentCount(t *testing.T) {
	r := redact.New(redact.Config{Keys: []string{"pw"}})
	h := asyncbus.NewHandler(&syncbuf.Buffer{}, &asyncbus.Options{ReplaceAttr: r.ReplaceAttr})
	l := slog.New(h)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 500 {
				l.InfoContext(context.Background(), "m", "pw", "x", "ok", "y")
			}
		})
	}
	wg.Wait()
	require.NoError(t, h.Close())
	assert.Equal(t, uint64(2000), r.Redactions())
}

// TestCaseFolding: ASCII letters fold, other letters must match exactly,
// and long keys are looked up too.
func TestCaseFolding(t *testing.T) {
	long := strings.Repeat("k", 70)
	r := redact.New(redact.Config{Keys: []string{"Größe", strings.ToUpper(long)}, Paths: []string{"ÄPFEL.x"}})
	for _, tc := range []struct {
		groups []string
		key    string
		want   bool
	}{
		{nil, "größe", true},
		{nil, "GRößE", true},
		{nil, "GRÖSSE", false},
		{nil, long, true},
		{nil, strings.ToUpper(long), true},
		{nil, long + "k", false},
		{[]string{"Äpfel"}, "X", true},
		{[]string{"äpfel"}, "x", false},
	} {
		got := r.ReplaceAttr(tc.groups, slog.String(tc.key, "v")).Value.String() == redact.DefaultMask
		assert.Equal(t, tc.want, got, "%v %s", tc.groups, tc.key)
	}
}

// nilPtrErr is an error whose Error dereferences its receiver: an error
// interface holding a nil *nilPtrErr panics when asked for its message.
type nilPtrErr struct{ msg string }

func (e *nilPtrErr) Error() string { return e.msg }

// TestTypedNilErrorIsLeftAsIs: an error interface holding a nil pointer
// whose Error panics is not inspected: ReplaceAttr returns it unchanged
// and does not count it, and every handler writes what it writes without
// the Redactor (slog writes "<nil>") instead of panicking.
func TestTypedNilErrorIsLeftAsIs(t *testing.T) {
	var nilErr *nilPtrErr
	cfg := redact.Config{Keys: []string{"password"}, Values: []redact.Matcher{redact.BearerToken}}

	r := redact.New(cfg)
	in := slog.Any("err", error(nilErr))
	var got slog.Attr
	require.NotPanics(t, func() { got = r.ReplaceAttr(nil, in) })
	assert.True(t, in.Equal(got), "value left as it is, got %v", got.Value)
	assert.Zero(t, r.Redactions())

	handlers := []struct {
		name string
		new  func(w *syncbuf.Buffer, replace func([]string, slog.Attr) slog.Attr) (slog.Handler, func() error)
	}{
		{"slog JSON", func(w *syncbuf.Buffer, replace func([]string, slog.Attr) slog.Attr) (slog.Handler, func() error) {
			return slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: replace}), func() error { return nil }
		}},
		{"asyncbus JSON", func(w *syncbuf.Buffer, replace func([]string, slog.Attr) slog.Attr) (slog.Handler, func() error) {
			h := asyncbus.NewHandler(w, &asyncbus.Options{ReplaceAttr: replace})
			return h, h.Close
		}},
	}
	for _, tc := range handlers {
		t.Run(tc.name, func(t *testing.T) {
			logTo := func(replace func([]string, slog.Attr) slog.Attr) string {
				var buf syncbuf.Buffer
				h, closeH := tc.new(&buf, replace)
				require.NotPanics(t, func() {
					slog.New(h).Info("m", "err", error(nilErr), "password", "hunter2")
				})
				require.NoError(t, closeH())
				return buf.String()
			}
			want := logTo(noTime)
			r := redact.New(cfg)
			got := logTo(r.Then(noTime))
			assert.Equal(t, strings.Replace(want, "hunter2", redact.DefaultMask, 1), got)
			assert.Contains(t, got, `"err":"<nil>"`)
			assert.Equal(t, uint64(1), r.Redactions(), "only the password")
		})
	}
}

// TestNoSecretInAnyFormat logs the same secrets every way a user may pass
// them (context fields, With, WithGroup, errors, HandleAttrs), in every
// asyncbus format, with the Redactor installed: no attribute leaks in any
// format. A secret in the message is masked in every format but the zap
// ones, which do not pass the message through ReplaceAttr (as zap does
// not; documented in the package doc and README).
func TestNoSecretInAnyFormat(t *testing.T) {
	const secret = "s3cr3tTOKEN"
	formats := []struct {
		name          string
		format        asyncbus.Format
		masksMessages bool
	}{
		{"json", asyncbus.JSON, true},
		{"text", asyncbus.Text, true},
		{"logfmt", asyncbus.Logfmt, true},
		{"console", asyncbus.Console, true},
		{"zapjson", asyncbus.ZapJSON, false},
		{"zapconsole", asyncbus.ZapConsole, false},
	}
	for _, tc := range formats {
		t.Run(tc.name, func(t *testing.T) {
			r := redact.New(redact.Config{Keys: []string{"password"}, Values: []redact.Matcher{redact.BearerToken}})
			var buf syncbuf.Buffer
			h := asyncbus.NewHandler(&buf, &asyncbus.Options{Format: tc.format, ReplaceAttr: r.ReplaceAttr,
				Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields, StackTraceLevel: slog.LevelError}, Encoding: asyncbus.EncodingOptions{Color: asyncbus.ColorNever}})
			ctx := ctxattrs.With(context.Background(), slog.String("password", secret), slog.String("auth", "Bearer "+secret))
			log := slog.New(h)
			log.InfoContext(ctx, "ctx fields")
			log.With("password", secret).Info("with attrs")
			log.WithGroup("g").Info("group", "password", secret, "e", errors.New("Bearer "+secret))
			log.Error("error", "error", errors.New("call failed: Bearer "+secret))
			require.NoError(t, handleAttrs(h, context.Background(), time.Now(), slog.LevelInfo, "attrs", []slog.Attr{slog.String("password", secret)}))
			log.Info("in message: Bearer " + secret)
			require.NoError(t, h.Close())

			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			require.GreaterOrEqual(t, len(lines), 6)
			msgLine := -1
			for i, line := range lines {
				if strings.Contains(line, "in message:") {
					msgLine = i
					continue
				}
				assert.NotContains(t, line, secret)
			}
			require.GreaterOrEqual(t, msgLine, 0)
			if tc.masksMessages {
				assert.NotContains(t, lines[msgLine], secret)
				assert.Contains(t, lines[msgLine], "in message: Bearer "+redact.DefaultMask)
			} else {
				assert.Contains(t, lines[msgLine], "in message: Bearer "+secret, "the zap formats write the message as it is")
			}
		})
	}
}

// handleAttrs is the handler's attribute path, as otelbridge reaches it
// (Handler.HandleAttrs); h is an *asyncbus.Handler.
func handleAttrs(h slog.Handler, ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	ah, ok := h.(*asyncbus.Handler)
	if !ok {
		return fmt.Errorf("%T is not an *asyncbus.Handler", h)
	}
	return ah.HandleAttrs(ctx, t, level, msg, attrs)
}
