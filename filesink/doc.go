// Package filesink is a rotating log file for the asyncbus bus that never
// holds a torn line.
//
// A File receives whole records (lines ending in '\n') through WriteBatch,
// the bus's batch interface, which writes a batch with writev(2), or through
// Write (io.Writer, one record per call). Rotation (by size, hourly or
// daily), the inode check and preallocation happen only between calls, so a
// record is never split across two files. A write that fails part-way is
// completed or cut back to the last whole record (unless another program
// appended to the file in the meantime: its bytes are never cut, and the
// error says so), and Open moves any torn tail left by a crash to a side
// file, so the log itself only ever holds whole lines.
//
// There is one File per path, as lumberjack assumes (without checking it):
// a File holds an exclusive lock (flock(2)) on the file it writes, from Open
// to Close and on each new file after a rotation, so a second Open of the
// path, in this or another process (say, a restarted service overlapping the
// old instance), fails with ErrLocked instead of writing into, or repairing,
// the same file.
//
// Rotated files are named like lumberjack's: for "app.log",
// "app-2006-01-02T15-04-05.000.log" (the rotation time; "-N" is appended on
// a collision), optionally gzipped in the background to ".gz" through a
// ".gz.tmp" file that is renamed into place.
package filesink
