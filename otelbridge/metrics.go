package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/asyncbus/asyncbus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Names of the instruments [RegisterMetrics] creates.
const (
	MetricEnqueued    = "asyncbus.records.enqueued" // counter: Stats.Enqueued
	MetricWritten     = "asyncbus.records.written"  // counter: Stats.Written
	MetricDropped     = "asyncbus.records.dropped"  // counter: Stats.Dropped, split by reason
	MetricFailed      = "asyncbus.records.failed"   // counter: Stats.Failed
	MetricBatches     = "asyncbus.batches"          // counter: DrainerStats.Batches
	MetricQueueDepth  = "asyncbus.queue.depth"      // gauge: Stats.QueueDepth (bytes)
	MetricQueueHigh   = "asyncbus.queue.high_water" // gauge: Stats.QueueHighWater (bytes)
	MetricCapacity    = "asyncbus.queue.capacity"   // gauge: Stats.Capacity (bytes)
	MetricBatchSize   = "asyncbus.batch.size"       // gauge: DrainerStats.BatchTarget (records)
	MetricWrittenByte = "asyncbus.written.bytes"    // counter: Stats.WrittenBytes
	MetricLogged      = "asyncbus.records.logged"   // counter: Stats.LoggedTrace to LoggedOther, by level
	MetricOccupancy   = "asyncbus.queue.occupancy"  // gauge: Stats.QueueDepth / Stats.Capacity (0 to 1)
	MetricQueueDelay  = "asyncbus.queue.delay"      // gauge: Stats.QueueDelayP50, P99, Max (µs), by stat
)

// Values of the "reason" attribute on [MetricDropped].
var (
	dropOverflow = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", "overflow")))
	dropClosed   = metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", "closed")))
)

// queueDelayStat is the "stat" attribute on [MetricQueueDelay] for
// Stats.QueueDelayP50, QueueDelayP99 and QueueDelayMax, in that order.
var queueDelayStat = func() (opts [3]metric.ObserveOption) {
	for i, name := range []string{"p50", "p99", "max"} {
		opts[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("stat", name)))
	}
	return opts
}()

// loggedLevel is the "level" attribute on [MetricLogged] for Stats.LoggedTrace
// to LoggedOther, in that order.
var loggedLevel = func() (opts [7]metric.ObserveOption) {
	for i, name := range []string{"trace", "debug", "info", "warn", "error", "fatal", "other"} {
		opts[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String("level", name)))
	}
	return opts
}()

// RegisterMetrics publishes h's Stats and two of its DrainerStats as
// observable instruments on meter, read once per collection with one Stats
// and one DrainerStats call:
//
//   - counters asyncbus.records.enqueued, .written, .failed, and
//     .dropped (attribute reason = "overflow" or "closed"), asyncbus.batches
//     and asyncbus.written.bytes;
//   - counter asyncbus.records.logged, the records logged by level
//     (attribute level = "trace", "debug", "info", "warn", "error", "fatal"
//     or "other": Stats.LoggedTrace to LoggedOther, where each level counts
//     the levels up to the next and "other" those below trace);
//   - gauges asyncbus.queue.depth, .high_water and .capacity (bytes in the
//     ring), asyncbus.queue.occupancy (depth over capacity, from 0 to 1:
//     the one to alert on, as a full ring makes callers wait or drop) and
//     asyncbus.batch.size (the records of the drainer's last batch);
//   - gauge asyncbus.queue.delay, in microseconds, how long records waited
//     between Handle and the output over the last 10 to 20 seconds
//     (attribute stat = "p50", "p99" or "max": Stats.QueueDelayP50,
//     QueueDelayP99, QueueDelayMax).
//
// asyncbus.batches and asyncbus.batch.size come from DrainerStats, a
// debugging view whose fields may change between asyncbus versions: graph
// them to diagnose the drainer, do not alert on them.
//
// Unregister the returned Registration to stop observing h.
func RegisterMetrics(meter metric.Meter, h *asyncbus.Handler) (metric.Registration, error) {
	if meter == nil || h == nil {
		return nil, errors.New("otelbridge: RegisterMetrics needs a meter and a handler")
	}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	enqueued := counter(MetricEnqueued, "{record}", "Records accepted into the bus.")
	written := counter(MetricWritten, "{record}", "Records written to the output.")
	dropped := counter(MetricDropped, "{record}", "Records dropped because the ring was full or the bus closed.")
	failed := counter(MetricFailed, "{record}", "Records whose write failed.")
	batches := counter(MetricBatches, "{batch}", "Batches written to the output.")
	bytes := counter(MetricWrittenByte, "By", "Bytes written to the output.")
	logged := counter(MetricLogged, "{record}", "Records logged, by level.")
	depth := gauge(MetricQueueDepth, "By", "Bytes waiting in the ring.")
	high := gauge(MetricQueueHigh, "By", "Highest ring occupancy seen.")
	capacity := gauge(MetricCapacity, "By", "Ring capacity.")
	batch := gauge(MetricBatchSize, "{record}", "Records in the drainer's last batch.")
	occupancy, err := meter.Float64ObservableGauge(MetricOccupancy, metric.WithUnit("1"),
		metric.WithDescription("Fraction of the ring in use: bytes queued over capacity."))
	errs = append(errs, err)
	delay := gauge(MetricQueueDelay, "us", "How long records waited between Handle and the output over the last 10-20 s, per batch: p50, p99, max.")
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otelbridge: creating instruments: %w", err)
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s, d := h.Stats(), h.DrainerStats()
		o.ObserveInt64(enqueued, clamp(s.Enqueued))
		o.ObserveInt64(written, clamp(s.Written))
		// Dropped includes DroppedClosed; split it so the two reasons sum to it.
		o.ObserveInt64(dropped, clamp(s.Dropped-min(s.DroppedClosed, s.Dropped)), dropOverflow)
		o.ObserveInt64(dropped, clamp(s.DroppedClosed), dropClosed)
		o.ObserveInt64(failed, clamp(s.Failed))
		o.ObserveInt64(batches, clamp(d.Batches))
		o.ObserveInt64(bytes, clamp(s.WrittenBytes))
		o.ObserveInt64(depth, clamp(s.QueueDepth))
		o.ObserveInt64(high, clamp(s.QueueHighWater))
		o.ObserveInt64(capacity, clamp(s.Capacity))
		o.ObserveInt64(batch, clamp(d.BatchTarget))
		o.ObserveFloat64(occupancy, occupancyOf(s))
		for i, d := range [...]time.Duration{s.QueueDelayP50, s.QueueDelayP99, s.QueueDelayMax} {
			o.ObserveInt64(delay, d.Microseconds(), queueDelayStat[i])
		}
		for i, n := range [...]uint64{s.LoggedTrace, s.LoggedDebug, s.LoggedInfo, s.LoggedWarn, s.LoggedError, s.LoggedFatal, s.LoggedOther} {
			o.ObserveInt64(logged, clamp(n), loggedLevel[i])
		}
		return nil
	}, enqueued, written, dropped, failed, batches, bytes, depth, high, capacity, batch, logged, occupancy, delay)
	if err != nil {
		return nil, fmt.Errorf("otelbridge: registering callback: %w", err)
	}
	return reg, nil
}

// occupancyOf is the fraction of the ring in use, 0 for a ring of no
// capacity (none is made: Capacity is at least 4 KiB).
func occupancyOf(s asyncbus.Stats) float64 {
	if s.Capacity == 0 {
		return 0
	}
	return float64(s.QueueDepth) / float64(s.Capacity)
}

// clamp converts a counter to int64, saturating instead of wrapping.
func clamp(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
