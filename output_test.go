package asyncbus_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// hookedOutput implements every optional interface of an output. Its first
// WriteBatch call stops at gate until the test opens it, then counts the
// records queued behind its batch with the handler's backlog function.
type hookedOutput struct {
	mu        sync.Mutex
	records   []string
	report    func(error) bool
	backlog   func() uint64
	closings  []context.Context
	giveUpAt  time.Time
	entered   chan struct{} // closed when the first WriteBatch begins
	gate      chan struct{} // the first WriteBatch waits for it
	behind    uint64        // backlog() in the first WriteBatch, after gate
	syncs     int
	callsSeen int
}

func newHookedOutput() *hookedOutput {
	return &hookedOutput{entered: make(chan struct{}), gate: make(chan struct{})}
}

var (
	_ asyncbus.BatchWriter = (*hookedOutput)(nil)
	_ asyncbus.Syncer      = (*hookedOutput)(nil)
	_ asyncbus.Closer      = (*hookedOutput)(nil)
	_ asyncbus.Reporter    = (*hookedOutput)(nil)
	_ asyncbus.Backlogger  = (*hookedOutput)(nil)
)

func (o *hookedOutput) Write(p []byte) (int, error) {
	_, err := o.WriteBatch([][]byte{p})
	return len(p), err
}

func (o *hookedOutput) WriteBatch(records [][]byte) (int, error) {
	o.mu.Lock()
	first := o.callsSeen == 0
	o.callsSeen++
	o.mu.Unlock()
	if first {
		close(o.entered)
		<-o.gate
		behind := o.backlog() // from within the output's call, as Backlogger requires
		o.mu.Lock()
		o.behind = behind
		o.mu.Unlock()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range records {
		o.records = append(o.records, string(r))
	}
	return len(records), nil
}

func (o *hookedOutput) Sync() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs++
	return nil
}

func (o *hookedOutput) Closing(ctx context.Context) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closings = append(o.closings, ctx)
	if o.giveUpAt.IsZero() {
		o.giveUpAt = time.Now().Add(time.Second)
	}
	return o.giveUpAt
}

func (o *hookedOutput) SetReport(report func(error) bool) { o.report = report }
func (o *hookedOutput) SetBacklog(backlog func() uint64)  { o.backlog = backlog }

// An output's hooks are connected by NewHandler itself, before it returns:
// reports reach OnError through the handler, the backlog counts the
// records queued behind the batch in the output's hands, and Close tells
// the output it began, with its context.
func TestOutputHooksConnectedByNewHandler(t *testing.T) {
	out := newHookedOutput()
	var (
		mu      sync.Mutex
		reports []error
	)
	h := asyncbus.NewHandler(out, &asyncbus.Options{OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err)
	}})
	require.NotNil(t, out.report, "SetReport is called before NewHandler returns")
	require.NotNil(t, out.backlog, "SetBacklog is called before NewHandler returns")

	log := slog.New(h)
	log.Info("first")
	<-out.entered // the drainer is in the output's call with the first record
	for _, m := range []string{"second", "third", "fourth"} {
		log.Info(m)
	}
	close(out.gate)
	require.True(t, out.report(errors.New("the output's own event")), "the handler takes the report while open")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.CloseContext(ctx))
	assert.False(t, out.report(errors.New("too late")), "after Close the output delivers its reports itself")

	out.mu.Lock()
	defer out.mu.Unlock()
	assert.EqualValues(t, 3, out.behind, "three records queued behind the batch in hand")
	assert.Len(t, out.records, 4)
	require.Len(t, out.closings, 1, "Close tells the output it began")
	_, hasDeadline := out.closings[0].Deadline()
	assert.True(t, hasDeadline, "with Close's context")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, reports, 1)
	assert.EqualError(t, reports[0], "the output's own event")
}

func TestDefaultWriteRetries(t *testing.T) {
	assert.Equal(t, 4, asyncbus.DefaultWriteAttempts)
	assert.Equal(t, time.Second, asyncbus.DefaultWriteRetryMax)
}
