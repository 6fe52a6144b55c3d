package threadcpu

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNowAdvancesWithWork: on Linux the thread's CPU time grows while it
// works; elsewhere Now says it has no figure.
func TestNowAdvancesWithWork(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, ok := Now()
	if runtime.GOOS != "linux" {
		assert.False(t, ok)
		return
	}
	assert.True(t, ok)
	x := 0
	for end := start; end == start; end, _ = Now() {
		for i := range 1 << 16 {
			x += i
		}
	}
	_ = x
	end, ok := Now()
	assert.True(t, ok)
	assert.Greater(t, end, start)
}
