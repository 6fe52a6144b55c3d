package asyncbus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
		err  bool
	}{
		{in: "trace", want: LevelTrace},
		{in: "TRACE", want: -8},
		{in: "debug", want: slog.LevelDebug},
		{in: "Info", want: slog.LevelInfo},
		{in: "WARN", want: slog.LevelWarn},
		{in: "warning", want: slog.LevelWarn},
		{in: "error", want: slog.LevelError},
		{in: "fatal", want: LevelFatal},
		{in: "warn+2", want: slog.LevelWarn + 2},
		{in: "DEBUG-4", want: slog.LevelDebug - 4},
		{in: "ERROR+4", want: 12},
		{in: " info ", want: slog.LevelInfo},
		{in: "-4", want: -4},
		{in: "12", want: 12},
		{in: "0", want: 0},
		{in: "", err: true},
		{in: "verbose", err: true},
		{in: "warn+x", err: true},
		{in: "+2", want: 2},
		{in: "info+", err: true},
		// The edges of int on this platform, 32 or 64 bits.
		{in: fmt.Sprintf("warn+%d", math.MaxInt), err: true},
		{in: fmt.Sprintf("debug-%d", math.MaxInt), err: true},
		{in: fmt.Sprintf("info+%d", math.MaxInt), want: slog.Level(math.MaxInt)},
		{in: fmt.Sprintf("trace-%d", math.MaxInt-7), want: slog.Level(math.MinInt)},
		{in: fmt.Sprintf("warn+%d", math.MaxInt-4), want: slog.Level(math.MaxInt)},
		{in: "warn+9223372036854775807", err: true},
		{in: "info+99999999999999999999", err: true},
		{in: "99999999999999999999", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLevel(tt.in)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseLevelRoundTripsSlogNames(t *testing.T) {
	for l := slog.Level(-12); l <= 16; l++ {
		got, err := ParseLevel(l.String())
		require.NoError(t, err, l.String())
		assert.Equal(t, l, got, l.String())
	}
}

func TestLevelRulesMatching(t *testing.T) {
	r, err := ParseLevelRules("info,db=debug,http.client=warn")
	require.NoError(t, err)
	tests := []struct {
		name string
		want slog.Level
	}{
		{"", slog.LevelInfo},
		{"api", slog.LevelInfo},
		{"db", slog.LevelDebug},
		{"db.sql", slog.LevelDebug},
		{"dbx", slog.LevelInfo},
		{"http", slog.LevelInfo},
		{"http.client", slog.LevelWarn},
		{"http.client.retry", slog.LevelWarn},
		{"http.server", slog.LevelInfo},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, r.Level(tt.name), "logger %q", tt.name)
	}
	assert.Equal(t, "info,db=debug,http.client=warn", r.String())
}

func TestLevelRulesErrors(t *testing.T) {
	const levels = "(want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer)"
	tests := []struct {
		rules string
		want  string
	}{
		{"info,warn", `asyncbus: level rules "info,warn": rule 2 "warn": a second default level (rule 1 is the default; other rules are name=level)`},
		{"db=", `asyncbus: level rules "db=": rule 1 "db=": empty level`},
		{"info,db=", `asyncbus: level rules "info,db=": rule 2 "db=": empty level`},
		{"info,,db=", `asyncbus: level rules "info,,db=": rule 3 "db=": empty level`},
		{"=debug", `asyncbus: level rules "=debug": rule 1 "=debug": empty logger name`},
		{"db=loud", `asyncbus: level rules "db=loud": rule 1 "db=loud": unknown level "loud" ` + levels},
		{"db=warn+x", `asyncbus: level rules "db=warn+x": rule 1 "db=warn+x": level "warn+x": bad offset "+x"`},
		{"db=warn+9223372036854775807", `asyncbus: level rules "db=warn+9223372036854775807": rule 1 "db=warn+9223372036854775807": level "warn+9223372036854775807": offset "+9223372036854775807" out of range`},
		{"db=99999999999999999999", `asyncbus: level rules "db=99999999999999999999": rule 1 "db=99999999999999999999": level "99999999999999999999" out of range`},
		{"db=info,db=warn", `asyncbus: level rules "db=info,db=warn": rule 2 "db=warn": logger "db" already set by rule 1 (logger names match in any case)`},
		{"db=info,DB=warn", `asyncbus: level rules "db=info,DB=warn": rule 2 "DB=warn": logger "DB" already set by rule 1 (logger names match in any case)`},
		{"nonsense", `asyncbus: level rules "nonsense": rule 1 "nonsense": unknown level "nonsense" ` + levels},
		{"info;db=debug", `asyncbus: level rules "info;db=debug": rule 1 "info;db=debug": logger name "info;db" has ';' (allowed: letters, digits, '.', '_', '-', '/'); rules are separated by ','`},
		{"info;warn", `asyncbus: level rules "info;warn": rule 1 "info;warn": unknown level "info;warn" ` + levels + ` (rules are separated by ',')`},
		{"info,my db=debug", `asyncbus: level rules "info,my db=debug": rule 2 "my db=debug": logger name "my db" has ' ' (allowed: letters, digits, '.', '_', '-', '/'); rules are separated by ','`},
		{"db*=debug", `asyncbus: level rules "db*=debug": rule 1 "db*=debug": logger name "db*" has '*' (allowed: letters, digits, '.', '_', '-', '/')`},
		{"db=debug=x", `asyncbus: level rules "db=debug=x": rule 1 "db=debug=x": unknown level "debug=x" ` + levels},
		{"db.=debug", `asyncbus: level rules "db.=debug": rule 1 "db.=debug": logger name "db." has an empty part between dots`},
		{".db=debug", `asyncbus: level rules ".db=debug": rule 1 ".db=debug": logger name ".db" has an empty part between dots`},
		{"a..b=debug", `asyncbus: level rules "a..b=debug": rule 1 "a..b=debug": logger name "a..b" has an empty part between dots`},
	}
	for _, tt := range tests {
		t.Run(tt.rules, func(t *testing.T) {
			r, err := ParseLevelRules(tt.rules)
			require.EqualError(t, err, tt.want)
			assert.Nil(t, r)
			ok := MustParseLevelRules("warn,x=debug")
			require.EqualError(t, ok.Set(tt.rules), tt.want, "Set reports the same error")
			assert.Equal(t, "warn,x=debug", ok.String(), "a failed Set changes nothing")
		})
	}
	r, err := ParseLevelRules("")
	require.NoError(t, err)
	assert.Equal(t, slog.LevelInfo, r.Level("anything"))
}

func TestLevelRulesLoggerNames(t *testing.T) {
	r, err := ParseLevelRules("info, db.sql=debug ,k8s.io/client-go=warn,my_app-2=error,café=trace")
	require.NoError(t, err)
	assert.Equal(t, slog.LevelDebug, r.Level("db.sql.conn"))
	assert.Equal(t, slog.LevelWarn, r.Level("k8s.io/client-go"))
	assert.Equal(t, slog.LevelError, r.Level("my_app-2"))
	assert.Equal(t, LevelTrace, r.Level("café"))
	assert.Equal(t, "info,café=trace,db.sql=debug,k8s.io/client-go=warn,my_app-2=error", r.String())
	again, err := ParseLevelRules(r.String())
	require.NoError(t, err, "String is parseable")
	assert.Equal(t, r.String(), again.String())
}

// TestLevelRulesIgnoreCase: "INFO,DB=DEBUG" was accepted and its
// DB rule never matched the logger "db". Logger names now match in any
// case, as level names always did, through ParseLevelRules, Set, Level and
// Named handlers alike.
func TestLevelRulesIgnoreCase(t *testing.T) {
	tests := []struct {
		rules, logger string
		want          slog.Level
	}{
		{"INFO,DB=DEBUG", "db", slog.LevelDebug},
		{"info,db=debug", "DB", slog.LevelDebug},
		{"info,Http.Client=warn", "http.client.retry", slog.LevelWarn},
		{"info,http.client=warn", "HTTP.Client.Retry", slog.LevelWarn},
		{"info,Café=trace", "CAFÉ", LevelTrace},
		{"info,db=debug", "dbx", slog.LevelInfo},
	}
	for _, tt := range tests {
		t.Run(tt.rules+" "+tt.logger, func(t *testing.T) {
			r, err := ParseLevelRules(tt.rules)
			require.NoError(t, err)
			assert.Equal(t, tt.want, r.Level(tt.logger))

			var out bytes.Buffer
			h := NewHandler(&out, &Options{Rules: r})
			named := h.Named(tt.logger)
			assert.Equal(t, tt.want <= slog.LevelDebug, named.Enabled(context.Background(), slog.LevelDebug), "Named(%q)", tt.logger)
			require.NoError(t, h.Close())
		})
	}

	r := MustParseLevelRules("INFO,DB=DEBUG,Http.Client=WARN")
	assert.Equal(t, "info,db=debug,http.client=warn", r.String(), "names print in lower case")
	var out bytes.Buffer
	h := NewHandler(&out, &Options{Rules: r})
	defer h.Close()
	upper, lower := h.Named("DB"), h.Named("db")
	require.NoError(t, r.Set("info,Db=error"))
	assert.Equal(t, slog.LevelError, r.Level("dB"))
	ctx := context.Background()
	assert.False(t, upper.Enabled(ctx, slog.LevelWarn), "Set reaches the existing DB handler")
	assert.False(t, lower.Enabled(ctx, slog.LevelWarn), "and the db one")
	assert.True(t, upper.Enabled(ctx, slog.LevelError))
	assert.Equal(t, "DB", upper.Name(), "the logger name is written as given")
}

func TestLevelRulesChangeReachesExistingHandlers(t *testing.T) {
	rules := MustParseLevelRules("info")
	var out bytes.Buffer
	root := NewHandler(&out, &Options{Rules: rules})
	defer root.Close()
	db := root.Named("db")
	sql := db.Named("sql")
	ctx := context.Background()

	assert.False(t, db.Enabled(ctx, slog.LevelDebug))
	assert.False(t, sql.Enabled(ctx, slog.LevelDebug))

	require.NoError(t, rules.Set("warn,db=debug"))
	assert.True(t, db.Enabled(ctx, slog.LevelDebug), "existing handler sees the new rule")
	assert.True(t, sql.Enabled(ctx, slog.LevelDebug), "descendant inherits db's rule")
	assert.False(t, root.Enabled(ctx, slog.LevelInfo), "default moved to warn")
	assert.True(t, root.Enabled(ctx, slog.LevelWarn))

	require.Error(t, rules.Set("db=nope"))
	assert.True(t, db.Enabled(ctx, slog.LevelDebug), "a bad Set changes nothing")
}

func TestLevelRulesFromEnv(t *testing.T) {
	t.Setenv("ASYNCBUS_TEST_LEVEL", "debug,noisy=error")
	r, err := LevelRulesFromEnv("ASYNCBUS_TEST_LEVEL", "info")
	require.NoError(t, err)
	assert.Equal(t, slog.LevelDebug, r.Level("x"))
	assert.Equal(t, slog.LevelError, r.Level("noisy"))

	r, err = LevelRulesFromEnv("ASYNCBUS_TEST_LEVEL_UNSET", "warn")
	require.NoError(t, err)
	assert.Equal(t, slog.LevelWarn, r.Level("x"))

	t.Setenv("ASYNCBUS_TEST_LEVEL", "  ")
	r, err = LevelRulesFromEnv("ASYNCBUS_TEST_LEVEL", "warn")
	require.NoError(t, err)
	assert.Equal(t, "warn", r.String(), "a blank variable means the default")
}

// The README's pattern ignores the error: the rules must still be usable
// (never nil), and the error must say which variable and which rule.
func TestLevelRulesFromEnvBadValueGivesUsableRules(t *testing.T) {
	tests := []struct {
		name, env, def string
		unset          bool
		want           string // rules in force
		err            string
	}{
		{
			name: "bad variable, default used", env: "info;db=debug", def: "warn,db=debug", want: "warn,db=debug",
			err: `asyncbus: $ASYNCBUS_TEST_LEVEL: level rules "info;db=debug": rule 1 "info;db=debug": logger name "info;db" has ';' (allowed: letters, digits, '.', '_', '-', '/'); rules are separated by ','; using the default "warn,db=debug"`,
		},
		{
			name: "bad variable and bad default", env: "info,db=", def: "loud", want: "info",
			err: `asyncbus: $ASYNCBUS_TEST_LEVEL: level rules "info,db=": rule 2 "db=": empty level; default: level rules "loud": rule 1 "loud": unknown level "loud" (want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer); using info for every logger`,
		},
		{
			name: "unset variable, bad default", unset: true, def: "debug,db=", want: "info",
			err: `asyncbus: default: level rules "debug,db=": rule 2 "db=": empty level; using info for every logger`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "ASYNCBUS_TEST_LEVEL"
			if tt.unset {
				name = "ASYNCBUS_TEST_LEVEL_UNSET"
			} else {
				t.Setenv(name, tt.env)
			}
			r, err := LevelRulesFromEnv(name, tt.def)
			require.NotNil(t, r, "usable rules come with the error")
			require.EqualError(t, err, tt.err)
			assert.Equal(t, tt.want, r.String())
			r.Level("db") // usable: no panic
			require.NoError(t, r.Set("error"), "and changeable")
			assert.Equal(t, slog.LevelError, r.Level("db"))
		})
	}
}

// FuzzParseLevelRules: any string either is rejected (nil rules and an error
// that names the rule string) or parses to rules whose canonical String
// parses back to the same rules. Never a panic.
func FuzzParseLevelRules(f *testing.F) {
	for _, seed := range []string{"", "info,db=debug,http.client=warn", "info;db=debug", "db=", "warn+2,a/b=-4", "info,info=info", "db=info,db=warn", "é=trace", "a..b=info"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		r, err := ParseLevelRules(rules)
		if err != nil {
			require.Nil(t, r)
			require.Contains(t, err.Error(), "asyncbus: level rules ")
			return
		}
		again, err := ParseLevelRules(r.String())
		require.NoError(t, err, "String %q of %q parses", r.String(), rules)
		require.Equal(t, r.String(), again.String())
	})
}

// TestLevelsPrintedAsSlogDoes: by default LevelTrace and LevelFatal print
// as slog prints them, and as TRACE and FATAL with TraceFatalNames.
func TestLevelsPrintedAsSlogDoes(t *testing.T) {
	for _, tt := range []struct {
		traceFatal bool
		want       []string
	}{
		{false, []string{"DEBUG-4", "ERROR+4", "DEBUG-3", "ERROR+1"}},
		{true, []string{"TRACE", "FATAL", "DEBUG-3", "ERROR+1"}},
	} {
		var sink memSink
		h := NewHandler(&sink, &Options{Level: LevelTrace, Encoding: EncodingOptions{TraceFatalNames: tt.traceFatal}})
		l := slog.New(h)
		for _, lvl := range []slog.Level{LevelTrace, LevelFatal, LevelTrace + 1, slog.LevelError + 1} {
			l.Log(context.Background(), lvl, "x")
		}
		require.NoError(t, h.Close())
		var got []string
		for _, line := range sink.Lines() {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			got = append(got, m["level"].(string))
		}
		assert.Equal(t, tt.want, got)
	}
	// The default is slog's own spelling, byte for byte.
	var ours, theirs bytes.Buffer
	h := NewHandler(&ours, &Options{Level: LevelTrace})
	slogH := slog.NewJSONHandler(&theirs, &slog.HandlerOptions{Level: LevelTrace})
	for _, lvl := range []slog.Level{LevelTrace, LevelFatal, slog.LevelError + 8} {
		slog.New(h).Log(context.Background(), lvl, "x")
		slog.New(slogH).Log(context.Background(), lvl, "x")
	}
	require.NoError(t, h.Close())
	level := regexp.MustCompile(`"level":"[^"]*"`)
	assert.Equal(t, level.FindAllString(theirs.String(), -1), level.FindAllString(ours.String(), -1))
}
