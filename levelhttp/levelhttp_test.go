package levelhttp

import (
	"bytes"
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

// serve runs one request against h and returns the status and the decoded
// JSON answer.
func serve(t testing.TB, h http.Handler, method, body, ctype string) (int, map[string]string) {
	t.Helper()
	req := httptest.NewRequest(method, "/debug/log", strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var answer map[string]string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answer), "the answer is one JSON object: %q", rec.Body.String())
	return rec.Code, answer
}

func TestLevelRulesHTTPRejectsMalformedBodies(t *testing.T) {
	const start = "warn,db=debug"
	tests := []struct {
		name, body, ctype string
		code              int
		err               string
	}{
		{"trailing text", `{"rules":"debug"} trailing`, "application/json", 400, `levelhttp: want {"rules":"..."}: trailing data after the object at offset 18`},
		{"two objects", `{"rules":"debug"}{"rules":"error"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: trailing data after the object at offset 17`},
		{"two objects, spaced", "{\"rules\":\"debug\"}\n{\"rules\":\"error\"}\n", "application/json", 400, `levelhttp: want {"rules":"..."}: trailing data after the object at offset 18`},
		{"object then array", `{"rules":"debug"}[]`, "text/plain", 400, `levelhttp: want {"rules":"..."}: trailing data after the object at offset 17`},
		{"duplicate key", `{"rules":"debug","rules":"error"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: key "rules" given twice`},
		{"capitalised key", `{"Rules":"debug"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "Rules" (the only key is "rules", in lower case)`},
		{"upper-case key", `{"RULES":"debug"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "RULES" (the only key is "rules", in lower case)`},
		{"right key then cased duplicate", `{"rules":"debug","Rules":"error"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "Rules" (the only key is "rules", in lower case)`},
		{"unknown key", `{"rules":"debug","level":"x"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "level" (the only key is "rules", in lower case)`},
		{"misspelled key", `{"rule":"debug"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "rule" (the only key is "rules", in lower case)`},
		{"no rules key", `{}`, "application/json", 400, `levelhttp: want {"rules":"..."}: no "rules" key`},
		{"number", `{"rules":3}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not 3`},
		{"null", `{"rules":null}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not null`},
		{"array", `{"rules":["debug"]}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not ["debug"]`},
		{"object", `{"rules":{"db":"debug"}}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not {"db":"debug"}`},
		{"bool", `{"rules":true}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not true`},
		{"unterminated", `{"rules":"debug"`, "application/json", 400, `levelhttp: want {"rules":"..."}: the body ends at offset 16, inside the object (want ',' or '}')`},
		{"cut after key", `{"rules":`, "application/json", 400, `levelhttp: want {"rules":"..."}: the body ends at offset 9, inside the object (want a value)`},
		{"malformed", `{"rules" "debug"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: invalid character '"' at offset 9 (want ':')`},
		{"number with exponent", `{"rules":-1.5e+3}`, "application/json", 400, `levelhttp: want {"rules":"..."}: "rules" must be a JSON string, not -1.5e+3`},
		{"unknown key with a nested value", `{"rules":"debug","x":[1,{"a":null}]}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "x" (the only key is "rules", in lower case)`},
		{"escaped unknown key", `{"rule\u0053":"debug"}`, "application/json", 400, `levelhttp: want {"rules":"..."}: unknown key "ruleS" (the only key is "rules", in lower case)`},
		{"json type, bare string", `"debug"`, "application/json", 400, `levelhttp: want {"rules":"..."}: body is not a JSON object`},
		{"json type, text", `debug`, "application/json; charset=utf-8", 400, `levelhttp: want {"rules":"..."}: body is not a JSON object`},
		{"json type, empty", ``, "application/json", 400, `levelhttp: want {"rules":"..."}: empty body`},
		{"empty rules string", `{"rules":" "}`, "application/json", 400, `levelhttp: empty rules (send "info" to reset to Info)`},
		{"empty body", ``, "text/plain", 400, `levelhttp: empty rules (send "info" to reset to Info)`},
		{"blank body", " \n\t", "text/plain", 400, `levelhttp: empty rules (send "info" to reset to Info)`},
		{"bad rules in JSON", `{"rules":"info;db=debug"}`, "application/json", 400, `asyncbus: level rules "info;db=debug": rule 1 "info;db=debug": logger name "info;db" has ';' (allowed: letters, digits, '.', '_', '-', '/'); rules are separated by ','`},
		{"bad rules as text", `db=shout`, "text/plain", 400, `asyncbus: level rules "db=shout": rule 1 "db=shout": unknown level "shout" (want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer)`},
		{"oversized", strings.Repeat("a", 65<<10), "text/plain", 413, `levelhttp: body over 64 KiB`},
		{"oversized JSON", `{"rules":"` + strings.Repeat("x", 65<<10) + `"}`, "application/json", 413, `levelhttp: body over 64 KiB`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := asyncbus.MustParseLevelRules(start)
			h := Handler(rules)
			code, answer := serve(t, h, http.MethodPut, tt.body, tt.ctype)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.err, answer["error"])
			assert.Equal(t, start, rules.String(), "a rejected PUT changes nothing")
			_, got := serve(t, h, http.MethodGet, "", "")
			assert.Equal(t, start, got["rules"])
		})
	}
}

// TestLevelRulesHTTPRefusesOtherBodyTypes: a body that is not
// JSON and not sent as a rule string (text/plain or no type) gets 415 and
// a message saying what to send, and changes nothing. Before the fix,
// curl -X PUT -d 'rules=warn' (a form) set the rules "info,rules=warn",
// resetting the default level.
func TestLevelRulesHTTPRefusesOtherBodyTypes(t *testing.T) {
	const start = "warn,db=debug"
	const want = ` is not accepted: send {"rules":"..."} as JSON, or the bare rules as text/plain (curl -X PUT -H 'Content-Type: text/plain' --data-binary 'info,db=debug')`
	tests := []struct{ name, body, ctype, err string }{
		{"curl -d form", "rules=warn", "application/x-www-form-urlencoded", `levelhttp: Content-Type "application/x-www-form-urlencoded"` + want},
		{"form with charset", "rules=warn", "application/x-www-form-urlencoded; charset=utf-8", `levelhttp: Content-Type "application/x-www-form-urlencoded"` + want},
		{"multipart", "--x\r\n", "multipart/form-data; boundary=x", `levelhttp: Content-Type "multipart/form-data"` + want},
		{"octet stream", "warn", "application/octet-stream", `levelhttp: Content-Type "application/octet-stream"` + want},
		{"unparsable type", "warn", "text/plain;;", `levelhttp: Content-Type "text/plain;;"` + want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := asyncbus.MustParseLevelRules(start)
			code, answer := serve(t, Handler(rules), http.MethodPut, tt.body, tt.ctype)
			assert.Equal(t, http.StatusUnsupportedMediaType, code)
			assert.Equal(t, tt.err, answer["error"])
			assert.Equal(t, start, rules.String(), "a refused PUT changes nothing")
		})
	}
}

// TestLevelRulesHTTPTakesJSONWhateverItsType: curl -d '{"rules":...}'
// sends a form type; a body that starts with '{' is JSON all the same.
func TestLevelRulesHTTPTakesJSONWhateverItsType(t *testing.T) {
	for _, ctype := range []string{"application/x-www-form-urlencoded", "application/octet-stream", "text/plain"} {
		rules := asyncbus.MustParseLevelRules("warn")
		code, answer := serve(t, Handler(rules), http.MethodPut, `{"rules":"error,db=debug"}`, ctype)
		require.Equal(t, http.StatusOK, code, answer["error"])
		assert.Equal(t, "error,db=debug", rules.String(), ctype)
	}
}

func TestLevelRulesHTTPAcceptsWellFormedBodies(t *testing.T) {
	tests := []struct{ name, body, ctype, want string }{
		{"json", `{"rules":"error,db=debug"}`, "application/json", "error,db=debug"},
		{"json, spaced", " \n{ \"rules\" : \"error\" }\n", "application/json", "error"},
		{"json, escaped", `{"rules":"error,db=\u0064ebug"}`, "application/json", "error,db=debug"},
		{"json without content type", `{"rules":"trace"}`, "", "trace"},
		{"text", "error, db=debug\n", "text/plain", "error,db=debug"},
		{"text without content type", "fatal", "", "fatal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := asyncbus.MustParseLevelRules("warn")
			code, answer := serve(t, Handler(rules), http.MethodPut, tt.body, tt.ctype)
			require.Equal(t, http.StatusOK, code, answer["error"])
			assert.Equal(t, tt.want, answer["rules"])
			assert.Equal(t, tt.want, rules.String())
		})
	}
}

// Handler(nil) is a wiring mistake; it must answer clearly, not panic.
func TestHandlerNilRulesAnswers500(t *testing.T) {
	h := Handler(nil)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodPost} {
		code, answer := serve(t, h, m, "debug", "text/plain")
		assert.Equal(t, http.StatusInternalServerError, code, m)
		assert.Equal(t, "levelhttp: no level rules (Handler was given nil)", answer["error"], m)
	}
}

// The README's pattern: the error of LevelRulesFromEnv is ignored and the
// rules go straight to the endpoint, which must work.
func TestHandlerServesRulesFromBadEnv(t *testing.T) {
	t.Setenv("LEVELHTTP_TEST_LEVEL", "info;db=debug")
	rules, err := asyncbus.LevelRulesFromEnv("LEVELHTTP_TEST_LEVEL", "info,db=debug")
	require.Error(t, err)
	h := Handler(rules)
	code, answer := serve(t, h, http.MethodGet, "", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "info,db=debug", answer["rules"])
	code, answer = serve(t, h, http.MethodPut, `{"rules":"warn"}`, "application/json")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "warn", answer["rules"])
}

// FuzzLevelRulesPUT: any PUT body either is accepted, and then GET answers
// the same canonical rule string, which parses back to itself; or it is
// rejected with 400 or 413 and a non-empty error, and the rules are
// unchanged. Never a panic.
func FuzzLevelRulesPUT(f *testing.F) {
	for _, seed := range []struct{ body, ctype string }{
		{`{"rules":"warn,db=debug"}`, "application/json"},
		{`{"rules":"debug"} trailing`, "application/json"},
		{`{"rules":"debug"}{"rules":"error"}`, "application/json"},
		{`{"rules":"debug","rules":"error"}`, "application/json"},
		{`{"Rules":"debug"}`, "application/json"},
		{`{"rules":3}`, "application/json"},
		{`{"rules":"info;db=debug"}`, "text/plain"},
		{"error, db.sql=trace, k8s.io/client-go=warn+2", "text/plain"},
		{"info,db=", "text/plain"},
		{"", ""},
		{"-4,a=12", ""},
	} {
		f.Add([]byte(seed.body), seed.ctype)
	}
	const start = "warn,db=debug"
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		rules := asyncbus.MustParseLevelRules(start)
		h := Handler(rules)
		req := httptest.NewRequest(http.MethodPut, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var answer map[string]string
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answer), "answer %q", rec.Body.String())

		get := httptest.NewRecorder()
		h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, "/", nil))
		require.Equal(t, http.StatusOK, get.Code)
		var now rulesPayload
		require.NoError(t, json.Unmarshal(get.Body.Bytes(), &now))

		switch rec.Code {
		case http.StatusOK:
			assert.Equal(t, answer["rules"], now.Rules, "PUT answers the rules GET reports")
			again, err := asyncbus.ParseLevelRules(now.Rules)
			require.NoError(t, err, "GET's rules %q parse", now.Rules)
			assert.Equal(t, now.Rules, again.String(), "canonical form is stable")
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			assert.NotEmpty(t, answer["error"])
			assert.Equal(t, start, now.Rules, "a rejected PUT changes nothing")
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	})
}
