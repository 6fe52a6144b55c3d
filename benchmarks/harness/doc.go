// Package harness measures slog handlers ("contestants") on the
// asyncbus reference workload and renders the figures as Markdown, JSON and
// an SVG chart. It backs the asyncbus-bench command and the nested
// benchmarks module (github.com/asyncbus/asyncbus/benchmarks), which may
// import it because Go's internal rule is by import-path prefix. [CLI]
// holds what those commands share (the common flags, the run, the output
// files and the FAIL checks of [Problems]); package clitest holds their
// shared test helpers.
//
// # Workload
//
// Every contestant gets the same work: N copies of the reference ~200-byte
// access-log record, logged through a [log/slog.Logger] front end with
// [log/slog.Logger.LogAttrs] (seven attributes: method, path, status,
// latency, bytes, cache_hit, seq), split across G goroutines into a real
// file. The seq attribute is goroutine*[SeqStride]+counter, so the file can
// be read back and every record found exactly once.
//
// # Figures
//
// One run of one contestant at one goroutine count yields a [Sample]:
//   - records/s end to end: the clock starts when the goroutines are
//     released and stops when the contestant's flush has returned and the
//     harness has fsynced the file, i.e. when every byte is in the file.
//     Everyone pays that one fsync because asyncbus's Flush syncs a file
//     itself; Sample.SyncNS shows its cost;
//   - call latency percentiles: each goroutine reads the monotonic clock
//     before and after every SampleEvery-th call into a preallocated slice;
//     ns/call is the mean of those samples (the two clock reads, a few tens of ns, are
//     paid by every contestant alike and included in every figure);
//   - allocations per record: runtime.MemStats.Mallocs delta / N (the
//     handler's own goroutines included);
//   - CPU per record: getrusage user+system delta / N, whole process;
//   - peak RSS: getrusage ru_maxrss. It is per run only when runs are
//     isolated in child processes ([Config.Isolate]); in-process it is the
//     process's high-water mark so far;
//   - idle CPU: after the flush the handler stays open for [Config.Idle]
//     and the process CPU over that window is reported as a percentage of
//     one core (a garbage collection is forced before the window so the
//     workload's leftover garbage does not count);
//   - lines in the file, counted by reading the file back after Close:
//     lost = N - lines. Drop-marker lines ("asyncbus: records dropped" with
//     an integer "dropped" attribute) are counted apart, and the counts
//     they report are summed, so that in Drop mode lines + reported drops
//     must equal N (the Unaccounted figure is N - lines - reported drops).
//
// # Repeats
//
// Each (contestant, goroutines) pair runs [Config.Repeat] times, in
// alternation (every contestant once per repeat, the repeats' orders the
// rows of a Williams design, see [RepOrder]) so that machine drift, and
// whatever the previous run leaves behind, hit every contestant alike; a
// [Summary] holds the median of each figure, except the line
// accounting (lines, lost, reported drops, unaccounted), which is the
// worst repeat's, so that a single loss is never hidden by the median.
package harness
