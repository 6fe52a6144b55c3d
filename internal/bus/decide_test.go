package bus

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   batchInputs
		want batchAction
	}{
		{"healthy, busy: write", batchInputs{health: healthy}, actWrite},
		{"healthy, small after a sleep: gather", batchInputs{health: healthy, small: true, gather: true}, actGather},
		{"small but not after a sleep or small round: write", batchInputs{health: healthy, small: true}, actWrite},
		{"gather cut short by a Flush", batchInputs{health: healthy, small: true, gather: true, urgent: true}, actWrite},
		{"gather cut short by the watermark", batchInputs{health: healthy, small: true, gather: true, pastWatermark: true}, actWrite},
		{"torn: write (the owed bytes first)", batchInputs{health: torn}, actWrite},
		{"failing, probe not due, room to spare: hold", batchInputs{health: failing}, actHold},
		{"failing, probe due: probe", batchInputs{health: failing, probeDue: true}, actProbe},
		{"failing, a Flush waits: probe now", batchInputs{health: failing, urgent: true}, actProbe},
		{"failing, past the watermark: fail fast", batchInputs{health: failing, pastWatermark: true}, actFailFast},
		{"failing, a Block caller waits: fail fast", batchInputs{health: failing, blocked: true}, actFailFast},
		{"failing, the hold was woken: fail fast", batchInputs{health: failing, woken: true}, actFailFast},
		{"failing, probe due beats the watermark", batchInputs{health: failing, probeDue: true, pastWatermark: true}, actProbe},
		{"failing, small after a sleep: gather first", batchInputs{health: failing, small: true, gather: true}, actGather},
		{"Close gave up: fail fast, whatever else", batchInputs{health: healthy, urgent: true, aborted: true}, actFailFast},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want.String(), decide(tc.in).String())
		})
	}
}
