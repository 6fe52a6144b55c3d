// Package sampling thins out repetitive log records before they are
// encoded. A Handler wraps any slog.Handler (typically an
// *asyncbus.Handler) and, for each record below the exempt level, decides
// from the record's (level, message, logger) key whether to pass it on:
// the first First records of a key in each tick (one second by default)
// are kept, then every Thereafter-th. Dropped records never reach the
// wrapped handler, so they cost no encoding.
//
//	h, err := sampling.NewHandler(asyncbus.NewHandler(os.Stdout, nil), sampling.Config{First: 100, Thereafter: 100})
//	log := slog.New(h)
//
// Sampling is off unless such a Handler is installed. Records at or above
// Config.Exempt (Error by default) are never sampled.
//
// Memory is fixed: keys are hashed into a table of Config.Slots slots, so
// the table never grows however many distinct messages are logged. A slot
// keeps two things, and a collision treats them differently:
//
//   - the decision: one window counter (a lock-free atomic word) says
//     which records are kept. Keys that collide in a slot share it, so a
//     collision makes sampling stricter for them (fewer records kept),
//     never looser.
//   - the report: the number of records suppressed since the last marker
//     is kept per key, for up to four keys per slot (slotWays). Markers
//     therefore never add one key's suppressed records to another's. When
//     more keys than that suppress records in one slot, the slot makes room
//     by reporting one key's pending count at once, in a marker of its own,
//     so keys that collide and keep alternating get more, smaller markers.
//
// More Slots make collisions rarer. A key is also told apart by the Handler
// (or WithMarkers binding) that logged it: handlers made by Named for every
// request are separate keys of their own.
//
// Dropped records are reported in-band: once per tick, the first record
// handled in a new tick sweeps the table and, for each key that dropped
// records since the last sweep, writes one record "suppressed N similar
// records" at the key's level, with its message under "sampled_msg" and its
// logger name, through the wrapped handler of the Handler that dropped them
// (handlers sharing a Sampler each get their own keys' markers). Sampler.Report
// sweeps on demand (call it before closing the wrapped handler, so nothing
// stays unreported). Sampler.Stats counts kept, suppressed and reported
// records.
//
// A Sampler can also be installed in the asyncbus handler itself, as
// asyncbus.Options.Features.Sampler (it is an asyncbus.MarkingSampler): the
// handler then decides before encoding, counts refusals in its
// Stats.Sampled, writes the markers itself (never sampling them) and
// writes the pending ones when it closes.
//
// The configuration can be swapped at run time with Sampler.SetConfig; each
// record is decided under one consistent configuration.
//
// Time: windows follow the records' own times (a record without one is
// stamped with time.Now), but never run ahead of the wall clock by more
// than one tick. When a record's window is later than the last sweep's
// (the first record of each tick, or a record stamped ahead), the Sampler
// reads time.Now and counts the record in the tick after the clock's if
// its own is later still. One record stamped far in the future (a skewed
// remote clock passed on by a bridge, a bad caller) therefore delays the
// markers by at most one tick and merges its key's windows for at most
// two, instead of stopping both until the clock catches up.
package sampling
