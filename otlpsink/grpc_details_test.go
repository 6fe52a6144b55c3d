package otlpsink

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRetryInfoDelay(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    string
		want time.Duration
	}{
		{"none", "", -1},
		{"unpadded", base64.RawStdEncoding.EncodeToString(rpcStatus(8, "q", 2, 5e8)), 2500 * time.Millisecond},
		{"padded", base64.StdEncoding.EncodeToString(rpcStatus(8, "quota", 0, 3e6)), 3 * time.Millisecond},
		{"status without RetryInfo", base64.StdEncoding.EncodeToString(rpcStatus(8, "q", -1, 0)), -1},
		{"negative delay: retry at once", base64.StdEncoding.EncodeToString(rpcStatus(8, "q", 0, -1)), 0},
		{"not base64", "!!!", -1},
		{"not protobuf", base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff}), -1},
		{"cut short", base64.StdEncoding.EncodeToString(rpcStatus(8, "q", 1, 0)[:12]), -1},
	} {
		assert.Equal(t, tc.want, retryInfoDelay(tc.v), tc.name)
	}
}

func TestGRPCTimeoutFormat(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Nanosecond:        "1n",
		99999999:               "99999999n",
		100000000:              "100000u",
		10 * time.Second:       "10000000u",
		time.Hour:              "3600000m",
		1000 * time.Hour:       "3600000S",
		1<<63 - 1:              "2562048H",
		1500 * time.Nanosecond: "1500n",
		0:                      "1n",
	} {
		assert.Equal(t, want, grpcTimeout(d), d.String())
	}
}
