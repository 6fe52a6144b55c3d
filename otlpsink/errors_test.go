package otlpsink

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatusErrorText: the collector's status text, whether it is
// retried, and the body only when there is one (no dangling colon).
func TestStatusErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  StatusError
		want string
	}{
		{StatusError{Code: 503, Status: "503 Service Unavailable"}, "otlpsink: collector answered 503 Service Unavailable (retryable)"},
		{StatusError{Code: 503, Status: "503 Overloaded", Body: "queue full"}, "otlpsink: collector answered 503 Overloaded (retryable): queue full"},
		{StatusError{Code: 400, Body: "bad proto", Permanent: true}, "otlpsink: collector answered 400 Bad Request (permanent): bad proto"},
		{StatusError{Code: 599}, "otlpsink: collector answered 599 (retryable)"},
	} {
		assert.Equal(t, tc.want, tc.err.Error())
	}
}
