package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConcurrentWrites: writes from several goroutines all land, whole,
// while String is read (run with -race).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("line\n", 400), b.String())
}

// TestTakeEmpties: Take returns what was written since the last Take, a
// copy that later writes do not change.
func TestTakeEmpties(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("one\n"))
	got := b.Take()
	_, _ = b.Write([]byte("two\n"))
	assert.Equal(t, "one\n", string(got))
	assert.Equal(t, "two\n", string(b.Take()))
	assert.Empty(t, b.Take())
}
