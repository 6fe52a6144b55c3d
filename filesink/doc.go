// Package filesink is a rotating log file for the asyncbus bus that never
// holds a torn line.
//
// A File receives whole records (lines ending in '\n') through WriteBatch,
// the bus's batch interface, which writes a batch with writev(2) on Linux,
// or through Write (io.Writer, one record per call). Rotation (by size,
// hourly or daily), the identity check and preallocation happen only
// between calls, so a record is never split across two files. A write that
// fails part-way is completed or cut back to the last whole record (unless
// another program appended to the file in the meantime: its bytes are never
// cut, and the error says so), and Open moves any torn tail left by a crash
// to a side file, so the log itself only ever holds whole lines.
//
// There is one File per path, as lumberjack assumes (without checking it):
// a File holds an exclusive lock (flock(2), LockFileEx on Windows) on the
// file it writes, from Open to Close and on each new file after a rotation,
// so a second Open of the path, in this or another process (say, a restarted
// service overlapping the old instance), fails with ErrLocked instead of
// writing into, or repairing, the same file.
//
// Rotated files are named like lumberjack's: for "app.log",
// "app-2006-01-02T15-04-05.000.log" (the rotation time; "-N" is appended on
// a collision), optionally gzipped in the background to ".gz" through a
// ".gz.tmp" file that is renamed into place.
//
// New files are readable and writable by their owner only (DefaultPerm
// 0o600, directories 0o700), as lumberjack's are: logs carry request and
// personal data. Options.Perm widens the mode, and a rotation gives the new
// file the mode of the one it replaces.
//
// # Windows and other systems
//
// filesink works on every system Go supports; what differs from Linux:
//
//   - Writes: Linux writes a batch with one writev(2); other Unix systems
//     and Windows write record by record (still between rotations, never
//     splitting a record).
//   - The lock: flock(2) on Unix (fcntl(2) on AIX, where a second File in
//     the same process is not detected); on Windows LockFileEx on one byte
//     far past the end of the file, so readers and other appenders are never
//     blocked. js, wasip1 and plan9 have no locks: Open reports that once to
//     OnError and goes on, as on a file system without locks.
//   - Rotation: Windows cannot rename a file that is open, so the file is
//     closed first, renamed, and a new one opened; the lock is released for
//     that moment, and a failed rename reopens the same file and writes on
//     (reported as on Unix). Retention and compression remove a backup only
//     after closing it; a backup another program holds open cannot be
//     removed there and is reported to OnError.
//   - Preallocation (Options.Preallocate) uses fallocate(2) and exists on
//     Linux only; elsewhere the first attempt is reported and it is turned
//     off.
//   - A torn record is cut back using the descriptor's offset on Unix; on
//     Windows the file's size stands in, which cannot tell another program's
//     append made in the same instant from the File's own bytes.
//   - Mode bits: on Windows a file is only read-only or not.
//   - Symlink needs the right to create symbolic links on Windows (Developer
//     Mode or an administrator); without it Open fails with the system's
//     error.
package filesink
