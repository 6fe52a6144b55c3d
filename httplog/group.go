package httplog

import (
	"context"
	"sync/atomic"
)

// groupKey is the context key of a request's group id; a zero-size
// unexported type cannot collide.
type groupKey struct{}

// groupCounter numbers the requests served, for their group ids.
// atomic.Uint64 is 64-bit aligned on 32-bit platforms too, and Add gives
// each request its own value whatever the concurrency.
var groupCounter atomic.Uint64

// Group is asyncbus.FlightRecorder's Group for requests served through
// the middleware: a context's group is its request, so a request's Error
// (a 5xx access record, a panic, an Error it logs itself) writes the
// Debug records kept for that request and nobody else's. A context not
// derived from a request served by the middleware has no group. With
// OpenTelemetry, try otelbridge.TraceGroup first and fall back on Group.
func Group(ctx context.Context) (id [16]byte, ok bool) {
	if g, isGroup := ctx.Value(groupKey{}).(*[16]byte); isGroup {
		return *g, true
	}
	return id, false
}

// newGroup returns a group id unique in this process: "httplog\x00" and
// the next counter value, big-endian.
func newGroup() (g [16]byte) {
	copy(g[:8], "httplog\x00")
	n := groupCounter.Add(1)
	for i := 15; i >= 8; i-- {
		g[i] = byte(n)
		n >>= 8
	}
	return g
}
