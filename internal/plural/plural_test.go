package plural

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"zero", Count(0, "record", "records"), "0 records"},
		{"one", Count(1, "record", "records"), "1 record"},
		{"two", Count(2, "record", "records"), "2 records"},
		{"irregular", Count(uint64(1), "entry", "entries"), "1 entry"},
		{"irregular many", Count(uint64(3), "entry", "entries"), "3 entries"},
		{"negative", Count(int64(-1), "record", "records"), "-1 records"},
		{"largest uint64", Count(uint64(math.MaxUint64), "record", "records"), "18446744073709551615 records"},
		{"smallest int64", Count(int64(math.MinInt64), "record", "records"), "-9223372036854775808 records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
		})
	}
}
