package bus

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// file, unknownOutput and network describe the outputs a user can plug
// in, as the caller policy sees them in a bus configured by the root for
// mode overflow, with a BlockTimeout or not.
func file(overflow Overflow, blockTimeout time.Duration) callerInputs {
	return callerInputs{facts: configFacts(overflow, blockTimeout, true, false, false)}
}

func unknownOutput(overflow Overflow, blockTimeout time.Duration) callerInputs {
	return callerInputs{facts: configFacts(overflow, blockTimeout, false, false, false)}
}

func network(overflow Overflow, blockTimeout time.Duration) callerInputs {
	return callerInputs{facts: configFacts(overflow, blockTimeout, false, true, false)}
}

// with returns in changed by each of the changes.
func with(in callerInputs, changes ...func(*callerInputs)) callerInputs {
	for _, c := range changes {
		c(&in)
	}
	return in
}

// set returns the change that sets facts f.
func set(f callerFact) func(*callerInputs) { return func(in *callerInputs) { in.facts |= f } }

var (
	empty       = func(in *callerInputs) { in.queue = queueEmpty }
	shortQueue  = func(in *callerInputs) { in.queue, in.ahead = queueBehind, 400 }
	longQueue   = func(in *callerInputs) { in.queue, in.ahead = queueBehind, QuietWaitDepth+1 }
	full        = func(in *callerInputs) { in.queue = queueFull }
	errorLevel  = set(factWritten)
	syncLevel   = set(factSynced)
	busy        = set(factBusy)
	slow        = func(in *callerInputs) { in.speed = speedSlow }
	stuck       = func(in *callerInputs) { in.speed = speedStuck }
	reentrant   = set(factReentrant)
	markerAhead = set(factOrderAhead)
	backlogged  = set(factBacklogged)
	withDone    = set(factCancellable)
	doneClosed  = set(factCancellable | factCancelled)
	oversized   = func(in *callerInputs) {
		in.facts, in.queue, in.ahead = in.facts|factOversize, queueBehind, math.MaxUint64
	}
	durableRing  = func(in *callerInputs) { in.facts = in.facts&^factTouch | factDurable }
	blockTimeout = time.Second
)

func TestCallerActionFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   callerInputs
		want callerAction
	}{
		// A quiet program logging into a file: the line is written before
		// the call returns.
		{"Block file, Info, quiet, empty ring", with(file(Block, 0), empty), callerWriteThrough},
		{"Block file, Info, busy, empty ring", with(file(Block, 0), empty, busy), callerReturn},
		{"Block file, Error, busy, empty ring", with(file(Block, 0), empty, errorLevel, busy), callerWriteThrough},
		{"Block file, Info, quiet, short queue", with(file(Block, 0), shortQueue), callerWaitQuiet},
		{"Block file, Info, busy, long queue", with(file(Block, 0), longQueue, busy), callerReturn},
		{"Block file, Info, slow output, empty ring", with(file(Block, 0), empty, slow), callerReturn},
		{"Block file, Info, slow output, short queue", with(file(Block, 0), shortQueue, slow), callerReturn},
		{"Block file, Info, drop marker ahead, empty ring", with(file(Block, 0), empty, markerAhead), callerReturn},
		{"Block file, Info, from inside the output, short queue", with(file(Block, 0), shortQueue, reentrant), callerReturn},
		{"Block file, Info, caller's done channel, empty ring", with(file(Block, 0), empty, withDone), callerReturn},
		{"Block file, Info, caller's done channel, short queue", with(file(Block, 0), shortQueue, withDone), callerReturn},
		// Terminals, sockets and writers of unknown kind are never written
		// to by a caller, but a short queue still waits for them.
		{"Block unknown output, Info, quiet, empty ring", with(unknownOutput(Block, 0), empty), callerReturn},
		{"Block unknown output, Info, quiet, short queue", with(unknownOutput(Block, 0), shortQueue), callerWaitQuiet},
		// Drop mode and a BlockTimeout promise a bounded call.
		{"Drop file, Info, quiet, empty ring", with(file(Drop, 0), empty), callerReturn},
		{"Drop file, Info, quiet, short queue", with(file(Drop, 0), shortQueue), callerReturn},
		{"Block with timeout, file, Info, empty ring", with(file(Block, blockTimeout), empty), callerReturn},
		{"Block with timeout, file, Info, short queue", with(file(Block, blockTimeout), shortQueue), callerReturn},
		// Error records wait for their write in every mode, while the
		// output can take them within the bound.
		{"Drop file, Error, busy, long queue", with(file(Drop, 0), longQueue, errorLevel, busy), callerWaitWritten},
		{"Block file, Error, slow output", with(file(Block, 0), longQueue, errorLevel, slow), callerWaitWritten},
		{"Block file, Error, stuck output", with(file(Block, 0), longQueue, errorLevel, stuck), callerReturn},
		{"Block file, Error, backlog beyond the bound", with(file(Block, 0), longQueue, errorLevel, backlogged), callerReturn},
		{"Block file, Error, from inside the output", with(file(Block, 0), shortQueue, errorLevel, reentrant), callerReturn},
		{"Block file, Error, caller's context, empty ring", with(file(Block, 0), empty, errorLevel, withDone), callerReturn},
		{"Block file, Error, caller's context, queued", with(file(Block, 0), shortQueue, errorLevel, withDone), callerWaitWritten},
		{"Block file, Error, oversize", with(file(Block, 0), oversized, errorLevel, backlogged), callerReturn},
		// SyncLevel records wait for the sync unless the output is stuck.
		{"Block file, SyncLevel, slow output", with(file(Block, 0), shortQueue, syncLevel, slow), callerWaitSynced},
		{"Drop file, SyncLevel", with(file(Drop, 0), longQueue, syncLevel), callerWaitSynced},
		{"Block file, SyncLevel, stuck output", with(file(Block, 0), shortQueue, syncLevel, stuck), callerReturn},
		{"Block file, SyncLevel, from inside the output", with(file(Block, 0), shortQueue, syncLevel, reentrant), callerReturn},
		// A network output (a Closer) is never written to nor waited on.
		{"Block network, Info, quiet, empty ring", with(network(Block, 0), empty), callerReturn},
		{"Block network, Info, quiet, short queue", with(network(Block, 0), shortQueue), callerReturn},
		{"Block network, Error, quiet, short queue", with(network(Block, 0), shortQueue, errorLevel), callerReturn},
		// A full ring.
		{"Block, full ring", with(file(Block, 0), full), callerWaitRoom},
		{"Block with timeout, full ring", with(file(Block, blockTimeout), full), callerWaitRoom},
		{"Block network, full ring", with(network(Block, 0), full), callerWaitRoom},
		{"Block, full ring, from inside the output", with(file(Block, 0), full, reentrant), callerSpinRoom},
		{"Block, full ring, caller's done channel closed", with(file(Block, 0), full, doneClosed), callerDrop},
		{"Block, full ring, caller's done channel open", with(file(Block, 0), full, withDone), callerWaitRoom},
		{"Drop, full ring", with(file(Drop, 0), full), callerDrop},
		{"Drop, full ring, Error", with(file(Drop, 0), full, errorLevel), callerDrop},
		// A durable ring keeps records in its file, except oversize ones.
		{"Block durable, Info, quiet, empty ring", with(file(Block, 0), durableRing, empty), callerReturn},
		{"Block durable, Info, quiet, short queue", with(file(Block, 0), durableRing, shortQueue), callerReturn},
		{"Block durable, Info, oversize", with(file(Block, 0), durableRing, oversized), callerWaitWritten},
		{"Block durable, Info, oversize, from inside the output", with(file(Block, 0), durableRing, oversized, reentrant), callerReturn},
		{"Block durable, Info, oversize, caller's done channel", with(file(Block, 0), durableRing, oversized, withDone), callerReturn},
		{"Drop durable, Info, oversize", with(file(Drop, 0), durableRing, oversized), callerReturn},
		{"Block file, Info, oversize", with(file(Block, 0), oversized), callerReturn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want.String(), callerActionFor(tc.in).String())
		})
	}
}

// TestCallerActionMonotonic checks what Bus.callerAction relies on: an
// output in worse health never turns callerReturn into a write or a wait.
func TestCallerActionMonotonic(t *testing.T) {
	worse := []func(*callerInputs){slow, stuck, reentrant, busy, markerAhead, backlogged}
	for _, mode := range []callerInputs{file(Block, 0), unknownOutput(Block, 0), file(Drop, 0),
		file(Block, blockTimeout), network(Block, 0), with(file(Block, 0), durableRing)} {
		for _, queue := range []func(*callerInputs){empty, shortQueue, longQueue, full, oversized} {
			for _, level := range []func(*callerInputs){func(*callerInputs) {}, errorLevel, syncLevel, withDone} {
				healthy := with(mode, queue, level)
				if callerActionFor(healthy) != callerReturn {
					continue
				}
				for mask := 1; mask < 1<<len(worse); mask++ {
					in := healthy
					for i, w := range worse {
						if mask&(1<<i) != 0 {
							w(&in)
						}
					}
					assert.Equal(t, callerReturn.String(), callerActionFor(in).String(), fmt.Sprintf("%+v", in))
				}
			}
		}
	}
}

// TestCallersMayTouch is the configuration's answer: only Block without a
// BlockTimeout, never a network output.
func TestCallersMayTouch(t *testing.T) {
	assert.True(t, CallersMayTouch(Block, 0, false))
	assert.False(t, CallersMayTouch(Block, time.Second, false))
	assert.False(t, CallersMayTouch(Drop, 0, false))
	assert.False(t, CallersMayTouch(Block, 0, true))
	assert.True(t, ErrorsWait(false))
	assert.False(t, ErrorsWait(true))
}

// TestCallerPolicyMayAct checks the busy path's shortcut: where mayAct
// says no, the policy answers callerReturn for an ordinary record, in
// every configuration, with or without a done channel.
func TestCallerPolicyMayAct(t *testing.T) {
	for facts := callerFact(0); facts <= factDrop|factTouch|factDirect|factDurable; facts++ {
		if facts&^(factDrop|factTouch|factDirect|factDurable) != 0 {
			continue
		}
		b := &Bus{facts: facts}
		for _, ahead := range []uint64{0, 8, QuietWaitDepth, QuietWaitDepth + 8, 1 << 20, math.MaxUint64} {
			for _, done := range []<-chan struct{}{nil, make(chan struct{})} {
				in := b.queuedInputs(0, done, ahead)
				if !b.mayAct(ahead) {
					assert.Equal(t, callerReturn.String(), callerActionFor(in).String(), "facts %b, ahead %d", facts, ahead)
				}
			}
		}
	}
}
