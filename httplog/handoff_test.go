package httplog_test

import (
	"bytes"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hidden hides an asyncbus handler's type from the middleware, which then
// hands it a slog.Record, as it does any other handler.
type hidden struct{ slog.Handler }

// dropVarying removes the attributes that differ from run to run.
func dropVarying(_ []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case slog.TimeKey, "http.server.request.duration", "event.duration", "latency", "exception.stacktrace", "stack_trace", "error.stack_trace":
		return slog.Attr{}
	}
	return a
}

// TestAsyncbusHandoff: the access record an asyncbus handler gets straight
// from the middleware's attributes is the line a slog.Record of them
// gives, for every key set, with bodies, panics and aborts.
func TestAsyncbusHandoff(t *testing.T) {
	handlers := map[string]http.HandlerFunc{
		"/ok": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = io.WriteString(w, "hello")
		},
		"/missing": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) },
		"/panic":   func(http.ResponseWriter, *http.Request) { panic("boom") },
		"/abort":   func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
	}
	for _, opts := range []*httplog.Options{
		{RequestIDHeader: "X-Id"},
		{RequestIDHeader: "X-Id", Keys: httplog.GCPKeys},
		{RequestIDHeader: "X-Id", Keys: httplog.ECSKeys, BodyLimit: 3},
	} {
		lines := func(wrap func(slog.Handler) slog.Handler) string {
			var out bytes.Buffer
			h := asyncbus.NewHandler(&out, &asyncbus.Options{ReplaceAttr: dropVarying, Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}})
			mux := http.NewServeMux()
			for p, f := range handlers {
				mux.Handle(p, f)
			}
			srv := httptest.NewUnstartedServer(httplog.New(slog.New(wrap(h)), opts)(mux))
			srv.Config.ErrorLog = log.New(io.Discard, "", 0)
			srv.Start()
			for _, p := range []string{"/ok", "/missing", "/panic", "/abort"} {
				req, err := http.NewRequest(http.MethodPost, srv.URL+p, strings.NewReader("body"))
				require.NoError(t, err)
				req.Header.Set("X-Id", "id"+p)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			}
			srv.Close()
			require.NoError(t, h.Close())
			return out.String()
		}
		direct := lines(func(h slog.Handler) slog.Handler { return h })
		viaRecord := lines(func(h slog.Handler) slog.Handler { return hidden{h} })
		assert.Equal(t, 4, strings.Count(direct, "\n"), direct)
		assert.Equal(t, viaRecord, direct)
		assert.Equal(t, 4, strings.Count(direct, `"id/`), "each record carries its id once: %s", direct)
	}
}
