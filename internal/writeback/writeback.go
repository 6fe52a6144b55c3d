// Package writeback starts the kernel's write-back of a log file's dirty
// pages every so many bytes written, without waiting for it, so that a
// later fsync has at most about that many bytes left to write (Linux:
// sync_file_range(2); elsewhere it does nothing).
package writeback

import (
	"io"
	"os"
)

// Pacer starts the write-back of one regular file every Every bytes
// written to it. Only its owner (the drainer) uses it.
type Pacer struct {
	f     *os.File
	every uint64
	since uint64 // bytes written since the last start
	count int    // write-backs started
}

// New returns a Pacer for w, or nil when w is not a regular *os.File or
// the platform cannot start a write-back.
func New(w io.Writer, every uint64) *Pacer {
	f, ok := w.(*os.File)
	if !ok || !supported || every == 0 {
		return nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return &Pacer{f: f, every: every}
}

// Due adds n bytes written and reports whether a write-back is due; it
// then counts afresh.
func (p *Pacer) Due(n int) bool {
	p.since += uint64(n)
	if p.since < p.every {
		return false
	}
	p.since = 0
	return true
}

// Start starts the write-back of the file's dirty pages and returns
// without waiting for it. An error means none was started: the next sync
// writes them, as without it.
func (p *Pacer) Start() error {
	err := start(p.f)
	if err == nil {
		p.count++
	}
	return err
}

// Started is how many write-backs Start started.
func (p *Pacer) Started() int { return p.count }
