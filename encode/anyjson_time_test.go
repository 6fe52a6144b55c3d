package encode

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// marshaledTime is appendMarshaledTime's output, or false where it stops.
func marshaledTime(t time.Time) (out string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if r != errJSONNative {
				panic(r)
			}
			ok = false
		}
	}()
	return string(appendMarshaledTime(nil, t)), true
}

// TestMarshaledTimeMatchesMarshalJSON compares appendMarshaledTime with
// time.Time.MarshalJSON: random instants in [0,9999] and around its ends,
// in zones up to and past its 24 hour limit: the same text, or a stop
// where MarshalJSON fails.
func TestMarshaledTimeMatchesMarshalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	zones := []*time.Location{
		time.UTC, time.Local, time.FixedZone("a", 5*3600+30*60), time.FixedZone("b", -(9*3600 + 59)),
		time.FixedZone("c", 86399), time.FixedZone("d", -86399), time.FixedZone("e", 86400),
		time.FixedZone("f", -86400), time.FixedZone("g", 100*3600), time.FixedZone("h", 59), time.FixedZone("i", -61),
	}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny)
	}
	ends := []int64{minJSONUnix, minJSONUnix + 86400, -62135596800, 0, -1, 253402300799, maxJSONUnix, maxJSONUnix - 86400}
	for i := range 200000 {
		var sec int64
		if i%4 == 0 {
			sec = ends[r.IntN(len(ends))] + int64(r.IntN(3*86400)) - 3*86400/2
		} else {
			sec = r.Int64N(maxJSONUnix-minJSONUnix+400*86400) + minJSONUnix - 200*86400
		}
		tm := time.Unix(sec, r.Int64N(1e9)/int64(1+r.IntN(3)*1000)).In(zones[r.IntN(len(zones))])
		want, err := tm.MarshalJSON()
		got, ok := marshaledTime(tm)
		if err != nil {
			require.False(t, ok, "%v: MarshalJSON fails (%v), so the plan must stop", tm, err)
			continue
		}
		require.True(t, ok, "%v", tm)
		require.Equal(t, string(want), got, "%v", tm)
	}
	// The newest record's second, from the stamp cache.
	now := time.Now()
	appendJSONTime(nil, now)
	got, ok := marshaledTime(now)
	require.True(t, ok)
	want, err := now.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}
