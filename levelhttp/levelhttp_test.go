package levelhttp

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

func TestLevelRulesHTTP(t *testing.T) {
	rules := asyncbus.MustParseLevelRules("info")
	srv := httptest.NewServer(Handler(rules))
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
