package otlpsink

import (
	"log/slog"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestEndpointResolution(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Options
		env  map[string]string
		want string
	}{
		{"default", Options{}, nil, "https://localhost:4318/v1/logs"},
		{"default insecure env", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_INSECURE": "true"}, "http://localhost:4318/v1/logs"},
		{"option base", Options{Endpoint: "http://c:4318"}, nil, "http://c:4318/v1/logs"},
		{"option base slash", Options{Endpoint: "http://c:4318/"}, nil, "http://c:4318/v1/logs"},
		{"option full path", Options{Endpoint: "http://c:4318/custom/logs"}, nil, "http://c:4318/custom/logs"},
		{"option host:port", Options{Endpoint: "c:4318"}, nil, "https://c:4318/v1/logs"},
		{"option host:port insecure", Options{Endpoint: "c:4318", Insecure: true}, nil, "http://c:4318/v1/logs"},
		{"option beats env", Options{Endpoint: "http://a:1"}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://b:2/x"}, "http://a:1/v1/logs"},
		{"logs env used as is", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://b:2/x", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:3"}, "http://b:2/x"},
		{"logs env no path kept", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://b:2"}, "http://b:2/"},
		{"generic env appends", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:3"}, "http://g:3/v1/logs"},
		{"generic env with path appends", Options{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://g:3/prefix/"}, "http://g:3/prefix/v1/logs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolve(tc.opt, envOf(tc.env))
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.url)
		})
	}
	_, err := resolve(Options{Endpoint: "ftp://x"}, envOf(nil))
	assert.Error(t, err)
}

func TestEnvHeadersTimeoutCompression(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":      "a=1,b=generic",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS": "Authorization=Bearer%20x%2Cy, k = v ",
		"OTEL_EXPORTER_OTLP_TIMEOUT":      "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":  "gzip",
	}
	c, err := resolve(Options{}, envOf(env))
	require.NoError(t, err)
	assert.Equal(t, "Bearer x,y", c.headers.Get("Authorization"))
	assert.Equal(t, "v", c.headers.Get("k"))
	assert.Empty(t, c.headers.Get("a"), "the logs-specific variable replaces the generic one")
	assert.Equal(t, 2500*time.Millisecond, c.timeout)
	assert.True(t, c.gzip)

	env["OTEL_EXPORTER_OTLP_LOGS_TIMEOUT"] = "100"
	env["OTEL_EXPORTER_OTLP_LOGS_COMPRESSION"] = "none"
	c, err = resolve(Options{}, envOf(env))
	require.NoError(t, err)
	assert.Equal(t, 100*time.Millisecond, c.timeout)
	assert.False(t, c.gzip)

	c, err = resolve(Options{Headers: map[string]string{"x": "y"}, Timeout: time.Second, Compression: "gzip"}, envOf(env))
	require.NoError(t, err)
	assert.Equal(t, "y", c.headers.Get("x"))
	assert.Empty(t, c.headers.Get("Authorization"), "Options.Headers replaces the environment")
	assert.Equal(t, time.Second, c.timeout)
	assert.True(t, c.gzip)

	for _, bad := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		{"OTEL_RESOURCE_ATTRIBUTES": "k=%zz"},
	} {
		_, err := resolve(Options{}, envOf(bad))
		assert.Error(t, err, bad)
	}
}

func TestResourceFromEnv(t *testing.T) {
	env := map[string]string{
		"OTEL_RESOURCE_ATTRIBUTES": "service.name=fromattrs,deployment.environment=prod,team=a%20b",
		"OTEL_SERVICE_NAME":        "fromname",
	}
	c, err := resolve(Options{Resource: []slog.Attr{slog.String("team", "own"), slog.Int("n", 1)}}, envOf(env))
	require.NoError(t, err)
	assert.Equal(t, []slog.Attr{
		slog.String("service.name", "fromname"), // OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES
		slog.String("deployment.environment", "prod"),
		slog.String("team", "own"), // Options.Resource wins over the environment
		slog.Int("n", 1),
	}, c.resource)

	c, err = resolve(Options{}, envOf(map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "team=a%20b"}))
	require.NoError(t, err)
	require.Len(t, c.resource, 2)
	assert.Equal(t, slog.String("team", "a b"), c.resource[0])
	assert.Equal(t, "service.name", c.resource[1].Key)
	assert.Contains(t, c.resource[1].Value.String(), "unknown_service:")
}

// TestEnvEndToEnd configures a handler from the environment only.
func TestEnvEndToEnd(t *testing.T) {
	rc := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=t1")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_SERVICE_NAME", "envsvc")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "host.name=h%201")
	h, err := NewHandler(Options{}, nil)
	require.NoError(t, err)
	slog.New(h).Info("from env", "seq", 0)
	require.NoError(t, h.Close())
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []pbKV{{"host.name", str("h 1")}, {"service.name", str("envsvc")}}, reqs[0].Resource)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	assert.Equal(t, "t1", rc.headers[0].Get("x-tenant"))
	assert.Equal(t, "gzip", rc.headers[0].Get("Content-Encoding"))
}

// TestMemoFor: a refused batch is remembered for longer than the bus's
// retries of it can take, whatever the handler's retry budget.
func TestMemoFor(t *testing.T) {
	tests := []struct {
		name     string
		attempts int
		max      time.Duration
		want     time.Duration
	}{
		{"defaults", 0, 0, rejectMemo},
		{"small budget", 3, 10 * time.Millisecond, rejectMemo},
		{"raised budget", 100, time.Second, 101 * time.Second},
		{"huge budget", math.MaxInt, time.Hour, 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, memoFor(tt.attempts, tt.max))
		})
	}
	t.Run("from the handler's options", func(t *testing.T) {
		s, err := NewSink(Options{Endpoint: "http://127.0.0.1:9"})
		require.NoError(t, err)
		h, err := s.NewHandler(&asyncbus.Options{Retry: asyncbus.RetryOptions{Attempts: 100}})
		require.NoError(t, err)
		assert.Equal(t, 101*time.Second, s.memo)
		require.NoError(t, h.Close())
	})
}

// TestHeaderNetHTTPRefusesFailsNew: a header net/http would refuse on
// every request is an error from New naming it, not an endless retry.
func TestHeaderNetHTTPRefusesFailsNew(t *testing.T) {
	cases := map[string]struct {
		headers map[string]string
		env     string
		wantErr string // "" means accepted
	}{
		"newline in value":       {headers: map[string]string{"X-Token": "abc\ndef"}, wantErr: `header "X-Token": invalid character '\n' in the value`},
		"carriage return":        {headers: map[string]string{"X-Token": "a\rb"}, wantErr: `"X-Token"`},
		"NUL in value":           {headers: map[string]string{"X-Token": "a\x00b"}, wantErr: `"X-Token"`},
		"DEL in value":           {headers: map[string]string{"X-Token": "a\x7fb"}, wantErr: `"X-Token"`},
		"space in name":          {headers: map[string]string{"X Token": "v"}, wantErr: `header "X Token": invalid character ' ' in the name`},
		"colon in name":          {headers: map[string]string{"X:Token": "v"}, wantErr: `"X:Token"`},
		"empty name":             {headers: map[string]string{"": "v"}, wantErr: "empty name"},
		"from the environment":   {env: "X-Token=a%0Ab", wantErr: `"X-Token"`},
		"tab and UTF-8 accepted": {headers: map[string]string{"X-Token": "a\tb é"}},
		"token chars accepted":   {headers: map[string]string{"X-A_b.c~!#$%&'*+^`|": "v"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := Options{Endpoint: "http://127.0.0.1:1", Headers: tc.headers}
			c, err := resolve(o, func(k string) string {
				if k == "OTEL_EXPORTER_OTLP_HEADERS" {
					return tc.env
				}
				return ""
			})
			if tc.wantErr == "" {
				require.NoError(t, err)
				for k, v := range tc.headers {
					req, rerr := http.NewRequest(http.MethodPost, "http://x", nil)
					require.NoError(t, rerr)
					req.Header.Set(k, v)
					require.NotNil(t, c.headers.Values(k), "header %q kept", k)
				}
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}
