package httplog_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/asyncbus/asyncbus/httplog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBodies(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
		_, _ = io.WriteString(w, "!")
	}
	for _, tc := range []struct {
		name      string
		limit     int
		body      string
		req, resp any // nil: absent
	}{
		{"off by default", 0, "hello", nil, nil},
		{"under the limit", 10, "hello", "hello", "hello!"},
		{"cut at the limit", 3, "hello", "hel", "hel"},
		{"no request body", 10, "", nil, "!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := serve(t, &httplog.Options{BodyLimit: tc.limit}, "/", echo)
			var body io.Reader = http.NoBody
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			resp, err := http.Post(srv.URL, "text/plain", body)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tc.body+"!", string(got))
			srv.Close()
			_, m := only(t, rec)
			assert.Equal(t, tc.req, m["http.request.body"])
			assert.Equal(t, tc.resp, m["http.response.body"])
		})
	}
}
