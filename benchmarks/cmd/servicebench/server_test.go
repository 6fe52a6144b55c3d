package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
