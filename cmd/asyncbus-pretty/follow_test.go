package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of follow.go: -f across a file that appears late, grows by
// partial lines, is rotated (renamed and re-created, with a last write to
// the old file) and truncated.

// notifyingBuffer is an output that signals every write.
type notifyingBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes chan struct{}
}

func newNotifyingBuffer() *notifyingBuffer {
	return &notifyingBuffer{writes: make(chan struct{}, 1)}
}

func (b *notifyingBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	select {
	case b.writes <- struct{}{}:
	default: // a signal is already pending
	}
	return n, err
}

func (b *notifyingBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the output is exactly want, failing after a
// deadline; it wakes on every write, never sleeps.
func (b *notifyingBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		got := b.String()
		if got == want {
			return
		}
		require.True(t, strings.HasPrefix(want, got), "output went wrong:\n%s\nwant a prefix of:\n%s", got, want)
		select {
		case <-b.writes:
		case <-deadline:
			require.Equal(t, want, got, "timed out")
		}
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestFollowRotationAndTruncation(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows refuses to rename or remove a file another handle holds open, so this rotation cannot happen there")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "app.log")
	out := newNotifyingBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-f", "-poll", "2ms", "-color", "never", path}, nil, out, &bytes.Buffer{})
	}()

	// The file appears after the follower started.
	appendFile(t, path, "one\ntwo\n")
	want := "one\ntwo\n"
	out.waitFor(t, want)

	// A line written in two parts is printed once, whole.
	appendFile(t, path, "thr")
	appendFile(t, path, "ee\n")
	want += "three\n"
	out.waitFor(t, want)

	// Rotation: the old file gets a last line (unterminated) after its
	// rename; a new file takes the path.
	require.NoError(t, os.Rename(path, path+".1"))
	appendFile(t, path+".1", "four\nfive-unterminated")
	appendFile(t, path, "six\n")
	want += "four\nfive-unterminated\nsix\n"
	out.waitFor(t, want)

	// Removal and re-creation.
	require.NoError(t, os.Remove(path))
	appendFile(t, path, "seven\n")
	want += "seven\n"
	out.waitFor(t, want)

	// Truncation: the file starts again, shorter than what was read.
	appendFile(t, path, "eight, long enough to matter\n")
	want += "eight, long enough to matter\n"
	out.waitFor(t, want)
	require.NoError(t, os.Truncate(path, 0))
	appendFile(t, path, "nine\n")
	want += "nine\n"
	out.waitFor(t, want)

	// A structured line is pretty-printed as ever.
	appendFile(t, path, `{"time":"2026-12-01T12:34:56.789Z","level":"INFO","msg":"ten"}`+"\n")
	want += "12:34:56.789 INFO  ten\n"
	out.waitFor(t, want)

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop when its context ended")
	}
	assert.Equal(t, want, out.String())
}

// TestFollowMissingFile: a path that does not exist is reported once on
// standard error and waited for; when the run ends, an unterminated last
// line is printed too.
func TestFollowMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.log")
	out, notices := newNotifyingBuffer(), newNotifyingBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-f", "-poll", "1ms", "-color", "never", path}, nil, out, notices)
	}()
	notice := "asyncbus-pretty: " + path + " does not exist yet; waiting for it to appear\n"
	notices.waitFor(t, notice)

	appendFile(t, path, "one\ntw")
	out.waitFor(t, "one\n")
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("follow did not stop when its context ended")
	}
	assert.Equal(t, "one\ntw", out.String(), "the unterminated last line is printed at the end")
	assert.Equal(t, notice, notices.String(), "reported once, however many polls")
}
