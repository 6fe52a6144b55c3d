package journald

import (
	"strconv"
	"time"

	"github.com/asyncbus/asyncbus/encode"
)

// The fields that carry asyncbus.Options.Features.Sequence's numbers,
// first in every entry, and a drop marker's count of lost records.
const (
	seqField     = "ASYNCBUS_SEQ"
	runField     = "ASYNCBUS_RUN"
	droppedField = "ASYNCBUS_DROPPED"
)

// The methods with which an asyncbus.Encoder carries the numbers.
var _ interface {
	AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int)
	AppendDropMarker(dst []byte, t time.Time, n uint64) []byte
} = (*encoder)(nil)

// AppendSequence implements the asyncbus.Encoder method of that name: the record's tag,
// then ASYNCBUS_SEQ and ASYNCBUS_RUN, in place of the tag. At most 64
// bytes more than the tag: "ASYNCBUS_SEQ=" and 20 digits and a newline
// (34), "ASYNCBUS_RUN=" and the 16 hex digits of a run identity and a
// newline (30).
func (e *encoder) AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int) {
	if len(rec) == 0 || rec[0] != recordTag {
		return nil, 0 // a foreign record: sent as text (Sink.wrapForeign)
	}
	dst = append(dst, recordTag)
	dst = append(dst, seqField+"="...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, '\n')
	return appendField(dst, runField, run), 1
}

// AppendDropMarker implements the asyncbus.Encoder method of that name: an entry at
// priority 4 (warning) with the message of the handler's drop marker and
// the count as ASYNCBUS_DROPPED, not passed to ReplaceAttr. The record's
// time is not sent, as for every entry.
func (e *encoder) AppendDropMarker(dst []byte, _ time.Time, n uint64) []byte {
	dst = append(dst, recordTag)
	dst = append(dst, "PRIORITY=4\n"...)
	dst = appendField(dst, "MESSAGE", encode.DropMessage)
	dst = append(dst, e.header...)
	dst = append(dst, droppedField+"="...)
	dst = strconv.AppendUint(dst, n, 10)
	return append(dst, '\n')
}
