package asyncbus

import "io"

// Open is NewHandler for configurations that can fail: it returns an error
// for an invalid option (see NewHandler) instead of using the default. With
// Options.Ring.File set it creates the ring file if needed, takes an
// exclusive lock on it (a second process gets an error wrapping
// ErrRingLocked), and writes every record an earlier process had
// accepted but not yet written to w, in order, before it returns, so nothing
// new is accepted before the replay. It fails if the file is locked, cannot
// be created or mapped, or w fails during the replay (the records then stay
// in the file for the next start). A damaged or foreign ring file is not an
// error: it is renamed aside, reported to Options.OnError (an error starting
// "asyncbus: ring file <path>: " that says what was wrong and where the file
// was kept), and logging starts with a fresh file. Stats.Recovered
// counts the replayed records.
//
// Guarantee: a record whose Handle returned nil survives kill -9, a panic or
// an OOM kill of the process and is written exactly once, with no torn line,
// by the next Open on the same ring file, when w is a regular file: a
// filesink.File (its Open sets a torn tail aside; the ring writes that record
// again whole and the repair raises no alarm) or an *os.File that is the
// file the crash left, opened O_APPEND or positioned at its end (the torn
// beginning of a record is cut off before the record is written again; if
// that cannot be done safely the fragment stays and OnError says so). For
// other writers the batch being written at the moment of the crash may be
// written twice. A record whose Handle never returned was not accepted: it is
// skipped quietly and not counted. It does not survive power loss or a
// kernel crash unless the kernel had written the pages back; for that use the
// sink's sync policy and Options.SyncLevel. Records longer than an eighth of
// the ring (the oversize path) are not kept in the file: in Block mode
// Handle returns only once such a record is in the output (for at most
// BlockTimeout, if set), so a crash cannot lose it.
func Open(w io.Writer, opts *Options) (*Handler, error) {
	return newHandler(w, opts, true, nil)
}
