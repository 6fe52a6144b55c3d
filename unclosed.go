package asyncbus

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
)

// lifeline is shared by the handler NewHandler returns and every handler
// derived from it (each copy of a Handler copies the pointer), and
// referenced by nothing else: neither the tree, its goroutines, the
// sampler nor the list of open handlers point to it. So it becomes
// unreachable exactly when the program has dropped every handler of the
// tree, and its cleanup closes the tree then. It holds the tree only to be
// a pointer-bearing allocation: the runtime may batch tiny pointer-free
// objects, delaying their cleanups.
type lifeline struct {
	tree    *tree
	cleanup runtime.Cleanup // stopped by Handler.Close
}

// newLifeline returns c's lifeline, whose cleanup closes c. The cleanup's
// argument, c, does not reference the lifeline, as AddCleanup requires.
func newLifeline(c *tree) *lifeline {
	l := &lifeline{tree: c}
	l.cleanup = runtime.AddCleanup(l, closeUnreachable, c)
	return l
}

// unclosedReported is set by the first report of a handler dropped without
// Close: a program that forgets Close usually forgets it for every handler
// it makes, and one report says what to fix.
var unclosedReported atomic.Bool

// errUnclosed is the report of a handler dropped without Close.
var errUnclosed = errors.New("asyncbus: a handler became unreachable without Close; it was closed then, after writing what it had queued, " +
	"but a program that ends first loses that queue: Close every handler (only this first one is reported)")

// closeUnreachable closes c, whose handlers were all dropped unclosed,
// writing what it queued, and reports the first such tree of the process
// to its Options.OnError. It runs on a goroutine of its own: Close waits
// for the output, and a cleanup that blocks would hold up the runtime's
// other cleanups. A tree closed by shutdown.CloseAll is left as it is.
func closeUnreachable(c *tree) {
	go func() {
		if c.bus.Closed() {
			return
		}
		err := c.CloseContext(context.Background()) // failures went to OnError as they happened
		// CompareAndSwap: of trees closed at once exactly one reports.
		if unclosedReported.CompareAndSwap(false, true) {
			c.onError(errors.Join(errUnclosed, err))
		}
	}()
}
