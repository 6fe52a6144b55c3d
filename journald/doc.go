// Package journald sends asyncbus records to the systemd journal over its
// native protocol (a datagram per record on /run/systemd/journal/socket),
// with the record's fields as journal fields; no cgo.
//
// Records are encoded on the caller into the protocol's bytes and queued
// on the handler's ring; the drainer only sends them, in batches, one
// datagram each. A record too large for one datagram (the kernel refuses
// it with EMSGSIZE or ENOBUFS) goes as the protocol allows: in a memfd
// sealed against changes, passed over the socket with SCM_RIGHTS.
//
// # Fields
//
// Every entry has, in this order:
//
//   - PRIORITY, from the level: below Info (Debug, asyncbus.LevelTrace) 7
//     (debug); Info up to Warn 6 (info); Warn up to Error 4 (warning);
//     Error up to asyncbus.LevelFatal 3 (err); LevelFatal and above 2
//     (crit). Levels in between take the level below them (Warn+2 is 4).
//   - MESSAGE, the record's message.
//   - SYSLOG_IDENTIFIER, Options.Identifier (the program's name by default).
//   - CODE_FILE, CODE_LINE and CODE_FUNC, when asyncbus.Options.AddSource is
//     set, as sd_journal_send writes them.
//   - The logger name of a handler made by Named, under the name mapped
//     from asyncbus.Options.Encoding.LoggerKey (LOGGER by default).
//   - The fields of asyncbus.Options.Features.Context (trace ids), then the
//     attributes: WithAttrs's, then the record's.
//
// With asyncbus.Options.Features.Sequence, ASYNCBUS_SEQ (the record's
// number) and ASYNCBUS_RUN (the handler's run identity, Stats.RunID) come
// first, and a drop marker is an entry at priority 4 with MESSAGE
// "asyncbus: records dropped" and ASYNCBUS_DROPPED, the count of records
// lost at that point: its ASYNCBUS_SEQ is the first lost record's number,
// and the next entry's is ASYNCBUS_DROPPED above it. The names are the
// package's own (not SEQ, which an attribute "seq" maps to; journald's own
// sequence numbers are __SEQNUM, per journal file). An attribute that
// maps to ASYNCBUS_SEQ, ASYNCBUS_RUN or ASYNCBUS_DROPPED (such as
// "asyncbus.dropped") is renamed with ATTR_ first, with Sequence or not,
// so no record passes for a drop marker.
//
// The record's time is not sent: the journal stamps each entry when it
// arrives, at most the handler's MaxLatency (20 ms) later unless the
// journal was unreachable and the handler retried.
//
// An attribute's name is its groups' names and its key joined with '_',
// mapped to the journal's rules: ASCII letters upper-cased, digits and '_'
// kept, any other character (one per rune, one per byte of invalid UTF-8)
// replaced by '_'; then leading underscores removed (the journal keeps
// names starting with '_' for the fields it sets itself); then "ATTR_" put
// first when the name is empty, starts with a digit or is one of the
// fields this package writes (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER,
// CODE_FILE, CODE_LINE, CODE_FUNC, and the three ASYNCBUS_ ones above);
// then cut to 64 bytes. So "user.id" is USER_ID, "http" group key "status" is
// HTTP_STATUS, "1st" is ATTR_1ST, "" is ATTR_, "message" is ATTR_MESSAGE.
// Two attributes that map to one name (a.b and a_b, or long names equal in
// their first 64 bytes) are both sent: the journal keeps every value of a
// field. Other journal fields (MESSAGE_ID, SYSLOG_FACILITY) can be set as
// attributes.
//
// Values are written as text: strings and []byte as they are (any bytes),
// numbers and booleans as strconv writes them, durations as
// time.Duration.String, times in RFC 3339 with nanoseconds, anything else
// with fmt's %+v (an error as its text). A slog.Group's members are fields
// of their own; empty groups and empty attributes are left out, as slog
// handlers do. A value, message or identifier with a newline is sent in
// the protocol's binary form (the name, a newline, its length as a
// little-endian uint64, the bytes, a newline).
//
// # Delivery
//
// A send that fails (journald is stopped or restarting: the socket is
// missing or refuses) is retried by the handler with back-off, as for
// any output (asyncbus.Options.Retry.Attempts); when it keeps failing, the
// records are counted in Stats.Failed and the error reaches OnError, once
// per second at most, and Close's error. A restarted journald is reached
// without reconnecting. A send waits at most Options.SendTimeout for room
// in the journal's socket. Records written to the Sink that this package
// did not encode (the handler's drop marker, without Sequence) are sent at
// priority 4 with their text as MESSAGE.
//
// On systems other than Linux the package builds, and NewSink and
// NewHandler return an error naming the system.
package journald
