package asyncbus

import (
	"github.com/asyncbus/asyncbus/encode"
	"github.com/asyncbus/asyncbus/internal/bus"
)

// seqFormat is how records in format f carry Options.Sequence's number
// and run identity: the first keys of a JSON object, or seq= and run=
// pairs at the start of every other format's line.
func seqFormat(o *Options) bus.SeqFormat {
	switch f := o.Format; {
	case !o.Sequence:
		return bus.SeqOff
	case f == JSON, f&0xff == encode.ZapJSON, f == encode.GCPJSON, f == encode.ECSJSON, f == encode.DatadogJSON:
		return bus.SeqJSON
	default:
		return bus.SeqKV
	}
}

// withSeqRoom moves the encoded line in p up by bus.SeqRoom bytes: the
// headroom where the bus writes the line's number (Options.Sequence).
func withSeqRoom(p []byte) []byte {
	n := len(p)
	p = append(p, make([]byte, bus.SeqRoom)...) // no allocation while cap(p) suffices
	copy(p[bus.SeqRoom:], p[:n])
	return p
}

// addSeqStats sets Stats.RunID.
func (c *shared) addSeqStats(s *Stats) {
	if c.seq {
		s.RunID = c.bus.RunID()
	}
}
