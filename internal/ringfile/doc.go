// Package ringfile keeps the bus's ring in a memory-mapped file that
// survives kill -9: Open maps it (replaying what a dead process left to the
// output first), and the drainer persists its cursors with Begin, Written
// and ZeroedTo around each batch.
//
// # The boundary with the bus
//
// The file owns its header page (format, state and sequence slots, their
// checksums and the order of their stores), the record checksum (Sum) and
// recovery: which records of an interrupted batch the output holds, cutting
// a torn record back, replaying the rest and counting what was lost. The
// bus owns everything else, and Options hands it over at Open:
//
//   - Layout: how a header word of the ring reads (its kind, length and
//     checksum bits). The ring's bytes are the bus's; the scan needs only
//     that entries start on 8-byte boundaries with one 8-byte header word.
//   - Numbering: how a record and a drop marker get their sequence number.
//     The file keeps a run's format, identity and next number and replays a
//     dead run's records through it; Room says how much headroom a numbered
//     record has, which its checksum leaves out.
//   - Write, Sync, Settle, Position, Cut, Read: the output as recovery uses
//     it, which SetOutput derives from the output itself, each call guarded
//     (a panicking output fails the replay with an error, never the process).
//
// Passing functions rather than importing the bus keeps the dependency one
// way (only the bus imports this package) and lets this package's tests
// run recovery on hand-built images with a layout and numbering of their own.
//
// # Protocol
//
// Every word the drainer stores into the mapping, and who reads it. The
// readers are in another process (the next one to open the file), so each
// store is a single aligned 8-byte atomic store: the kernel's page cache
// then holds the old word or the new one, never a mix.
//
//	word           stored by                      loaded by                      pairs with / invariant
//	state slots    drainer (publish, the slot     the next process's recovery    each word one aligned 8-byte store; the slot's
//	               that is not current)                                          words before the generation
//	generation     drainer (publish), last        the next process's recovery    a crash between stores leaves the old state
//	sequence       drainer (publish, with the     the next process's recovery    as the state slot: stored before the generation,
//	slots          state slot of that index)                                     so the numbering and the cursors switch together
//
// Package unsafe serves one purpose here: File.word points into the
// page-aligned mapping for those atomic stores (the reason is at the site).
package ringfile
