package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quantiles sorts the samples and picks p50, p99, p99.9 and the max.
func TestQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name                string
		lat                 []int64
		p50, p99, p999, max time.Duration
	}{
		{"none", nil, 0, 0, 0, 0},
		{"one", []int64{7}, 7, 7, 7, 7},
		{"thousand and one, reversed", func() []int64 {
			v := make([]int64, 1001)
			for i := range v {
				v[i] = int64(1000 - i)
			}
			return v
		}(), 500, 990, 999, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p50, p99, p999, maxi := quantiles(tc.lat)
			assert.Equal(t, []time.Duration{tc.p50, tc.p99, tc.p999, tc.max}, []time.Duration{p50, p99, p999, maxi})
		})
	}
}

// newService: the access record is the handler's own, or with the
// +httplog suffix the middleware's; either way two records per request.
func TestNewServiceAccessRecord(t *testing.T) {
	for _, tc := range []struct{ backend, access string }{
		{"asyncbus-block", `"msg":"access"`},
		{"asyncbus-block+httplog", `"msg":"request"`},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
			require.NoError(t, err)
			defer f.Close()
			handler, h, flush, err := newService(tc.backend, f)
			require.NoError(t, err)
			handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/order", nil))
			if flush != nil {
				require.NoError(t, flush())
			}
			require.NoError(t, h.(*asyncbus.Handler).Close())
			data, err := os.ReadFile(f.Name())
			require.NoError(t, err)
			assert.Equal(t, 2, strings.Count(string(data), "\n"), string(data))
			assert.Equal(t, 1, strings.Count(string(data), tc.access), string(data))
			assert.EqualValues(t, 1, serviceOf(handler).reqs.Load())
		})
	}
}
