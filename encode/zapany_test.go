package encode

import (
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestZapAnyTypedCases pins zap.Any's typed cases in both zap formats; the
// comparison with zap itself is integration/dropin_random_test.go.
func TestZapAnyTypedCases(t *testing.T) {
	f32, c64, s, d, tm := float32(0.1), complex64(complex(0.1, -2)), "a\bz", 1500*time.Millisecond, time.Date(2024, 5, 17, 10, 30, 45, 0, time.UTC)
	i8, u, b := int8(-3), uintptr(7), true
	for _, tc := range []struct {
		name          string
		v             any
		json, console string // the field as written
	}{
		// A float32 reaches the encoding only through a pointer or a
		// slice: slog.Any makes it a float64, as zapr's slog path sees it.
		{"float32 as slog has it", f32, `"v":0.10000000149011612`, `"v": 0.10000000149011612`},
		{"[]float32 NaN", []float32{float32(math.NaN())}, `"v":["NaN"]`, `"v": ["NaN"]`},
		{"complex128", complex(1.5, 2), `"v":"1.5+2i"`, `"v": "1.5+2i"`},
		{"complex64", c64, `"v":"0.1-2i"`, `"v": "0.1-2i"`},
		{"*string", &s, `"v":"a\u0008z"`, `"v": "a\u0008z"`},
		{"*int8", &i8, `"v":-3`, `"v": -3`},
		{"*uintptr", &u, `"v":7`, `"v": 7`},
		{"*bool", &b, `"v":true`, `"v": true`},
		{"*float32", &f32, `"v":0.1`, `"v": 0.1`},
		{"*complex64", &c64, `"v":"0.1-2i"`, `"v": "0.1-2i"`},
		{"*time.Duration", &d, `"v":1.5`, `"v": "1.5s"`},
		{"*time.Time", &tm, `"v":"2024-05-17T10:30:45Z"`, `"v": "2024-05-17T10:30:45Z"`},
		{"nil *int", (*int)(nil), `"v":null`, `"v": null`},
		{"nil *time.Time", (*time.Time)(nil), `"v":null`, `"v": null`},
		{"[]int8", []int8{1, -2}, `"v":[1,-2]`, `"v": [1, -2]`},
		{"[]int16", []int16{3}, `"v":[3]`, `"v": [3]`},
		{"[]uint16", []uint16{1, 2}, `"v":[1,2]`, `"v": [1, 2]`},
		{"[]uintptr", []uintptr{9}, `"v":[9]`, `"v": [9]`},
		{"[]float32", []float32{0.1, 2}, `"v":[0.1,2]`, `"v": [0.1, 2]`},
		{"[]complex128", []complex128{complex(1, 1)}, `"v":["1+1i"]`, `"v": ["1+1i"]`},
		{"[]complex64", []complex64{complex(1, -1)}, `"v":["1-1i"]`, `"v": ["1-1i"]`},
		{"[]time.Duration", []time.Duration{d, time.Millisecond}, `"v":[1.5,0.001]`, `"v": ["1.5s", "1ms"]`},
		{"[]time.Time", []time.Time{tm}, `"v":["2024-05-17T10:30:45Z"]`, `"v": ["2024-05-17T10:30:45Z"]`},
		{"[]error, nil left out", []error{errors.New("a"), nil, errors.New("b")}, `"v":[{"error":"a"},{"error":"b"}]`, `"v": [{"error": "a"}, {"error": "b"}]`},
		{"[]error empty", []error{nil}, `"v":[]`, `"v": []`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := slog.NewRecord(time.Time{}, slog.LevelInfo, "m", 0)
			r.AddAttrs(slog.Any("v", tc.v))
			assert.Equal(t, `{"level":"info","msg":"m",`+tc.json+"}\n", string(New(Options{Format: ZapJSON}).Append(nil, r, nil)))
			assert.Equal(t, "INFO\tm\t{"+tc.console+"}\n", string(New(Options{Format: ZapConsole}).Append(nil, r, nil)))
		})
	}
}
