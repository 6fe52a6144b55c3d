package asyncbus_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfLoggingProgram's output logs through the handler it serves, with
// slog.Default, from its Write and its Sync: a network writer reporting its
// own trouble. "path" gives it a Path method (a file-like output,
// as filesink); "sync" sets SyncLevel, so
// that Sync is called for every Error record.
const selfLoggingProgram = `package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
)

type selfLogging struct{}

func (selfLogging) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("from-output")) {
		slog.Info("from-output", "op", "write")
		slog.Error("from-output", "op", "write")
	}
	return os.Stdout.Write(p)
}

func (selfLogging) Sync() error {
	slog.Error("from-output", "op", "sync")
	return nil
}

type withPath struct{ selfLogging }

func (withPath) Path() string { return "/dev/stdout" }

func main() {
	var w interface{ Write([]byte) (int, error) } = selfLogging{}
	opts := &asyncbus.Options{}
	for _, mode := range os.Args[1:] {
		switch mode {
		case "path":
			w = withPath{}
		case "sync":
			opts.SyncLevel = slog.LevelError
		}
	}
	h := asyncbus.NewHandler(w, opts)
	slog.SetDefault(slog.New(h))
	for i := range 50 {
		slog.Info("line", "i", i)
		slog.Error("line", "i", i)
	}
	closeErr := h.Close()
	s := h.Stats()
	fmt.Fprintf(os.Stderr, "%d %d %d %d %v\n", s.Enqueued, s.Written, s.Dropped, s.Failed, closeErr)
}
`

// TestWriterLoggingThroughItsHandlerNeverDeadlocks runs the program as a
// child: with every combination it exits, keeps main's 100 lines and
// counts every record.
func TestWriterLoggingThroughItsHandlerNeverDeadlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	bin := buildProgram(t, "selflogging", selfLoggingProgram)
	for _, args := range [][]string{{}, {"path"}, {"sync"}, {"path", "sync"}} {
		t.Run(strings.Join(append([]string{"plain"}, args...), "+"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a failure bound
			defer cancel()
			var stdout, stderr bytes.Buffer
			c := exec.CommandContext(ctx, bin, args...)
			c.Stdout, c.Stderr = &stdout, &stderr
			require.NoError(t, c.Run(), "the program deadlocked or failed: %s", stderr.String())
			main := strings.Count(stdout.String(), `"msg":"line"`)
			assert.Equal(t, 100, main, "every line main logged")
			// The stats line comes last; before it, at most one report of a
			// record the output logged after Close began (from its final Sync).
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			require.LessOrEqual(t, len(lines), 2, stderr.String())
			if len(lines) == 2 {
				assert.Contains(t, lines[0], "logged after Close was dropped")
			}
			var enq, written, dropped, failed uint64
			_, err := fmt.Sscanf(lines[len(lines)-1], "%d %d %d %d", &enq, &written, &dropped, &failed)
			require.NoError(t, err, stderr.String())
			assert.Equal(t, enq, written+dropped+failed, "every record counted: %s", stderr.String())
			assert.Contains(t, stdout.String(), "from-output", "the output's own records are written too")
		})
	}
}
