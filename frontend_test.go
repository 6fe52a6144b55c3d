package asyncbus_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// lockedBuffer is an output collecting what is written, with a Sync that
// counts its calls or fails with syncErr.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	syncs   int
	syncErr error
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Sync() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.syncs++
	return b.syncErr
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// HandleAttrs writes what Handle writes for the same record, in every
// handler state, and waits as Handle does.
func TestHandleAttrsWritesWhatHandleWrites(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	attrs := []slog.Attr{slog.Int("a", 1), slog.String("b", "x"), slog.Bool("c", true),
		slog.Any("d", []int{1}), slog.Float64("e", 2.5), slog.String("f", "sixth")}
	for _, tc := range []struct {
		name   string
		derive func(*asyncbus.Handler) *asyncbus.Handler
	}{
		{"root", func(h *asyncbus.Handler) *asyncbus.Handler { return h }},
		{"named", func(h *asyncbus.Handler) *asyncbus.Handler { return h.Named("db") }},
		{"with attrs", func(h *asyncbus.Handler) *asyncbus.Handler {
			return h.WithAttrs([]slog.Attr{slog.Int("pool", 4)}).(*asyncbus.Handler)
		}},
		{"in a group", func(h *asyncbus.Handler) *asyncbus.Handler { return h.WithGroup("g").(*asyncbus.Handler) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write := func(handle func(h *asyncbus.Handler) error) string {
				var out lockedBuffer
				h := asyncbus.NewHandler(&out, nil)
				require.NoError(t, handle(tc.derive(h)))
				require.NoError(t, h.Close())
				return out.String()
			}
			viaAttrs := write(func(h *asyncbus.Handler) error {
				return h.HandleAttrs(context.Background(), at, slog.LevelWarn, "m", attrs)
			})
			viaRecord := write(func(h *asyncbus.Handler) error {
				r := slog.NewRecord(at, slog.LevelWarn, "m", 0)
				r.AddAttrs(attrs...)
				return h.Handle(context.Background(), r)
			})
			assert.Equal(t, viaRecord, viaAttrs)
			assert.Contains(t, viaAttrs, `"f":"sixth"`)
		})
	}
}

// HandleEncoded writes a record another logger encoded as given, counts it
// at its level, syncs it at SyncLevel, and refuses it after Close.
func TestHandleEncoded(t *testing.T) {
	var out lockedBuffer
	h := asyncbus.NewHandler(&out, nil)
	require.NoError(t, h.HandleEncoded(slog.LevelWarn, []byte("zap said so\n")))
	require.NoError(t, h.HandleEncoded(slog.LevelInfo, []byte("no newline")))
	require.NoError(t, h.HandleEncoded(asyncbus.LevelFatal, []byte("fatal\n")))
	out.mu.Lock()
	syncs := out.syncs
	out.mu.Unlock()
	assert.GreaterOrEqual(t, syncs, 1, "the fatal record is synced before HandleEncoded returns")
	require.NoError(t, h.Close())
	assert.Equal(t, "zap said so\nno newlinefatal\n", out.String())
	st := h.Stats()
	assert.EqualValues(t, 1, st.LoggedWarn)
	assert.EqualValues(t, 1, st.LoggedInfo)
	assert.ErrorIs(t, h.HandleEncoded(slog.LevelInfo, []byte("late\n")), asyncbus.ErrClosed)
}

// Sync writes and syncs what was handled before it, and returns the
// output's error.
func TestSync(t *testing.T) {
	for _, tc := range []struct {
		name    string
		syncErr error
	}{
		{"synced", nil},
		{"sync fails", errors.New("disk gone")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &lockedBuffer{syncErr: tc.syncErr}
			h := asyncbus.NewHandler(out, nil)
			defer func() { _ = h.Close() }()
			slog.New(h).Info("before")
			err := h.Sync()
			if tc.syncErr != nil {
				assert.ErrorIs(t, err, tc.syncErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Contains(t, out.String(), `"msg":"before"`)
			out.mu.Lock()
			defer out.mu.Unlock()
			assert.GreaterOrEqual(t, out.syncs, 1)
		})
	}
}

// hungOutput blocks every write until release is closed. It is a Closer,
// so that no record is written on the test's goroutine.
type hungOutput struct{ release chan struct{} }

func (o hungOutput) Write(p []byte) (int, error) {
	<-o.release
	return len(p), nil
}

func (o hungOutput) Closing(context.Context) time.Time { return time.Now() }

// A handler from WithWaitContext stops waiting for room when its context
// has ended: the record is dropped and counted, where the handler it was
// made from would wait for the hung output.
func TestWithWaitContextDropsInsteadOfWaiting(t *testing.T) {
	out := hungOutput{release: make(chan struct{})}
	h := asyncbus.NewHandler(out, &asyncbus.Options{Ring: asyncbus.RingOptions{Capacity: 4 << 10}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bounded := h.WithWaitContext(ctx)
	line := strings.Repeat("x", 200)
	var err error
	for i := 0; i < 1000 && err == nil; i++ { // 4 KiB fill up long before
		err = bounded.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, line, 0))
	}
	assert.ErrorIs(t, err, asyncbus.ErrDropped)
	assert.NotZero(t, h.Stats().Dropped)
	close(out.release)
	require.NoError(t, h.Close())
}

func TestGrouped(t *testing.T) {
	h := asyncbus.NewHandler(&lockedBuffer{}, nil)
	defer func() { require.NoError(t, h.Close()) }()
	for _, tc := range []struct {
		name    string
		handler slog.Handler
		grouped bool
	}{
		{"new", h, false},
		{"with attrs", h.WithAttrs([]slog.Attr{slog.Int("a", 1)}), false},
		{"empty group", h.WithGroup(""), false},
		{"group", h.WithGroup("g"), true},
		{"attrs in a group", h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)}), true},
		{"named in a group", h.WithGroup("g").(*asyncbus.Handler).Named("db"), true},
		{"bounded in a group", h.WithGroup("g").(*asyncbus.Handler).WithWaitContext(context.Background()), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.grouped, tc.handler.(*asyncbus.Handler).Grouped())
		})
	}
}
