package asyncbus

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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

func TestLevelRulesHTTP(t *testing.T) {
	rules := MustParseLevelRules("info")
	srv := httptest.NewServer(rules)
	defer srv.Close()

	get := func() string {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var p rulesPayload
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
		return p.Rules
	}
	put := func(body, ctype string) int {
		req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", ctype)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	assert.Equal(t, "info", get())
	assert.Equal(t, http.StatusOK, put(`{"rules":"warn,db=debug"}`, "application/json"))
	assert.Equal(t, "warn,db=debug", get())
	assert.Equal(t, slog.LevelDebug, rules.Level("db"))
	assert.Equal(t, http.StatusOK, put("error", "text/plain"))
	assert.Equal(t, "error", get())
	assert.Equal(t, http.StatusBadRequest, put("db=shout", "text/plain"))
	assert.Equal(t, http.StatusBadRequest, put(`{"rules":`, "application/json"))
	assert.Equal(t, http.StatusBadRequest, put(`{"rule":"debug"}`, "application/json"), "a misspelled key")
	assert.Equal(t, http.StatusBadRequest, put(`{}`, "application/json"), "no rules key")
	assert.Equal(t, http.StatusBadRequest, put("", "text/plain"), "an empty body")
	assert.Equal(t, http.StatusRequestEntityTooLarge, put(strings.Repeat("a", 65<<10), "text/plain"))
	assert.Equal(t, "error", get(), "rejected PUTs change nothing")

	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader("info"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
