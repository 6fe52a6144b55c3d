package otlpsink

import (
	"log/slog"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/asyncbus/asyncbus/encode"
)

// The LogRecord attributes that carry asyncbus.Options.Features.Sequence's
// numbers, first among a record's attributes, and a drop marker's count of
// lost records.
const (
	seqKey     = "asyncbus.seq"
	runKey     = "asyncbus.run"
	droppedKey = "asyncbus.dropped"
)

// unreserved returns a LogRecord attribute's key, or, for the keys of the
// numbers and of a drop marker's count (asyncbus.seq, asyncbus.run,
// asyncbus.dropped), the key with "_" appended: a record's own attribute
// never repeats the numbers' keys (OTLP keys are unique) nor passes for a
// drop marker, with Sequence or not (the asyncbus namespace is the
// library's).
func unreserved(key string) string {
	switch key { // compares lengths first: cheap on the common path
	case seqKey, runKey, droppedKey:
		return key + "_"
	}
	return key
}

// markerTag opens the drop markers this encoder writes (with Sequence): a
// framed LogRecord follows. The sink sends the LogRecord and, as for the
// handler's text markers, tells a marker from a user record by it (see
// WriteBatch). No record of this encoder and no text line starts with NUL.
const markerTag = 0

// The methods with which an asyncbus.Encoder carries the numbers.
var _ interface {
	AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int)
	AppendDropMarker(dst []byte, t time.Time, n uint64) []byte
} = (*encoder)(nil)

// AppendSequence implements the asyncbus.Encoder method of that name: it
// puts the attributes asyncbus.seq (an int) and asyncbus.run (a string)
// at the front of the LogRecord, in place of its tag and length (and a
// marker's markerTag), which it writes again with the new length.
// Repeated fields may come in any order in protobuf, so the record's own
// attributes follow later in the message. The head is 55 bytes more than
// what it replaces, plus the number's varint, plus one when the length's
// varint grows: within the handler's 64 bytes of room for numbers below
// 2^56.
func (e *encoder) AppendSequence(dst, rec []byte, seq uint64, run string) ([]byte, int) {
	off := 0
	if len(rec) > 0 && rec[0] == markerTag {
		off = 1
	}
	if !isFramed(rec[off:]) {
		return nil, 0 // a foreign record: sent as a text body (Sink.wrapForeign)
	}
	size, n := protowire.ConsumeVarint(rec[off+1:])
	seqAV := 1 + protowire.SizeVarint(seq)                    // AnyValue{int_value}
	seqKV := 2 + len(seqKey) + 2 + seqAV                      // KeyValue{key, value}
	runAV := 1 + protowire.SizeBytes(len(run))                // AnyValue{string_value}
	runKV := 2 + len(runKey) + protowire.SizeBytes(runAV) + 1 // KeyValue{key, value}
	if runKV > 127 || !utf8.ValidString(run) {
		return nil, 0 // not a run identity the handler makes (16 hex digits)
	}
	dst = append(dst, rec[:off+1]...) // the marker's tag, the record's tag
	dst = protowire.AppendVarint(dst, size+uint64(2+seqKV+2+runKV))
	// The two KeyValues, their sizes known: every length but the run's
	// value is below 128, one byte.
	dst = append(dst, byte(fLRAttributes<<3|protowire.BytesType), byte(seqKV))
	dst = append(dst, byte(fKVKey<<3|protowire.BytesType), byte(len(seqKey)))
	dst = append(dst, seqKey...)
	dst = append(dst, byte(fKVValue<<3|protowire.BytesType), byte(seqAV))
	dst = append(dst, byte(fAVInt<<3|protowire.VarintType))
	dst = protowire.AppendVarint(dst, seq)
	dst = append(dst, byte(fLRAttributes<<3|protowire.BytesType), byte(runKV))
	dst = append(dst, byte(fKVKey<<3|protowire.BytesType), byte(len(runKey)))
	dst = append(dst, runKey...)
	dst = append(dst, byte(fKVValue<<3|protowire.BytesType))
	dst = protowire.AppendVarint(dst, uint64(runAV))
	dst = append(dst, byte(fAVString<<3|protowire.BytesType))
	dst = protowire.AppendVarint(dst, uint64(len(run)))
	return append(dst, run...), off + 1 + n
}

// AppendDropMarker implements the asyncbus.Encoder method of that name: a WARN LogRecord at
// time t with the message of the handler's drop marker as its body and the
// count as the attribute asyncbus.dropped, behind markerTag.
func (e *encoder) AppendDropMarker(dst []byte, t time.Time, n uint64) []byte {
	dst = append(dst, markerTag)
	dst, mark := openLen(dst, fSLLogRecords)
	dst = appendTag(dst, fLRTime, protowire.Fixed64Type)
	dst = protowire.AppendFixed64(dst, uint64(t.UnixNano()))
	dst = appendTag(dst, fLRObserved, protowire.Fixed64Type)
	dst = protowire.AppendFixed64(dst, uint64(t.UnixNano()))
	dst = appendTag(dst, fLRSeverity, protowire.VarintType)
	dst = appendVarint(dst, uint64(severity(slog.LevelWarn)))
	dst = appendString(dst, fLRSeverityText, "WARN")
	dst, b := openLen(dst, fLRBody)
	dst = appendString(dst, fAVString, encode.DropMessage)
	dst = closeLen(dst, b)
	dst, kv := openLen(dst, fLRAttributes)
	dst = appendString(dst, fKVKey, droppedKey)
	dst, v := openLen(dst, fKVValue)
	dst = appendTag(dst, fAVInt, protowire.VarintType)
	dst = protowire.AppendVarint(dst, n)
	dst = closeLen(closeLen(dst, v), kv)
	return closeLen(dst, mark)
}

// ownFrame returns the framed LogRecord of r, a record of this encoder or
// one of its drop markers, and false for a foreign record.
func ownFrame(r []byte) ([]byte, bool) {
	if len(r) > 0 && r[0] == markerTag {
		r = r[1:]
	}
	return r, isFramed(r)
}
