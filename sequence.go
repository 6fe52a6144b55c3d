package asyncbus

import (
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/bus"
)

// seqFormat is how records in format f carry Options.Features.Sequence's number
// and run identity: the first keys of a JSON object, or seq= and run=
// pairs at the start of every other format's line.
func seqFormat(o *Options) bus.SeqFormat {
	switch f := o.Format; {
	case !o.Features.Sequence:
		return bus.SeqOff
	case f == JSON, f&0xff == encode.ZapJSON, f == encode.GCPJSON, f == encode.ECSJSON, f == encode.DatadogJSON:
		return bus.SeqJSON
	default:
		return bus.SeqKV
	}
}

// withSeqRoom returns the record p in b.data behind bus.SeqRoom bytes of
// headroom, where the bus writes the line's number (Options.Features.Sequence):
// p is b.data, moved up in place, or a line another logger encoded
// (HandleEncoded), copied in behind the room.
func (h *Handler) withSeqRoom(b *buffer, p []byte) []byte {
	if len(p) > 0 && len(b.data) > 0 && &p[0] == &b.data[0] {
		n := len(p)
		b.data = append(b.data, make([]byte, bus.SeqRoom)...) // no allocation while cap suffices
		copy(b.data[bus.SeqRoom:], b.data[:n])
	} else {
		b.data = append(append(b.data[:0], make([]byte, bus.SeqRoom)...), p...)
	}
	b.room = bus.SeqRoom
	return b.data
}

// addSeqStats sets Stats.RunID.
func (c *tree) addSeqStats(s *Stats) {
	if c.seq {
		s.RunID = c.bus.RunID()
	}
}
