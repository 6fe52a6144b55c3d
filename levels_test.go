package asyncbus

import (
	"bytes"
	"context"
	"log/slog"
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
	for _, bad := range []string{"info,warn", "db=", "=debug", "db=loud", "db=info,db=warn", "nonsense"} {
		_, err := ParseLevelRules(bad)
		assert.Error(t, err, bad)
	}
	r, err := ParseLevelRules("")
	require.NoError(t, err)
	assert.Equal(t, slog.LevelInfo, r.Level("anything"))
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

	t.Setenv("ASYNCBUS_TEST_LEVEL", "bogus")
	_, err = LevelRulesFromEnv("ASYNCBUS_TEST_LEVEL", "info")
	require.ErrorContains(t, err, "ASYNCBUS_TEST_LEVEL")
}
