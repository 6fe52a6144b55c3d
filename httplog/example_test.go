package httplog_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/ctxattrs"
	"github.com/asyncbus/asyncbus/httplog"
)

func Example() {
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{
		Features: asyncbus.FeatureOptions{Context: ctxattrs.Fields}, // records logged with the request's context carry its id
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "http.server.request.duration" {
				return slog.Attr{} // dropped so that the output is the same each run
			}
			return a
		},
	})
	log := slog.New(h)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		log.InfoContext(r.Context(), "loading user", "id", r.PathValue("id"))
		_, _ = io.WriteString(w, `{"name":"ann"}`)
	})
	server := httplog.New(log, nil)(mux)

	req := httptest.NewRequest(http.MethodGet, "/users/7", nil)
	req.Header.Set("X-Request-Id", "req-1")
	req.Header.Set("User-Agent", "example/1.0")
	server.ServeHTTP(httptest.NewRecorder(), req)
	_ = h.Close()
	// Output:
	// {"level":"INFO","msg":"loading user","request_id":"req-1","id":"7"}
	// {"level":"INFO","msg":"request","http.request.method":"GET","http.route":"GET /users/{id}","url.scheme":"http","url.path":"/users/7","network.protocol.version":"1.1","http.response.status_code":200,"http.response.body.size":14,"client.address":"192.0.2.1","user_agent.original":"example/1.0","request_id":"req-1"}
}
