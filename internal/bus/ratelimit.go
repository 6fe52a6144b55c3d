package bus

import (
	"sync/atomic"
	"time"
)

// rateLimit allows a burst of events, then one per interval (GCRA). It is
// safe for concurrent use: an allowed event costs one CAS, a refused one a
// load. The bus has two, for write-throughs and quiet waits.
type rateLimit struct {
	interval  int64        // ns between events at the sustained rate; <= 0: unlimited
	tolerance int64        // ns of burst: interval * (burst - 1)
	tat       atomic.Int64 // theoretical arrival time, ns on the bus's clock
}

// set configures l for a sustained rate of perSecond with bursts of burst;
// a non-zero interval or burst overrides them (tests; interval < 0 means
// unlimited).
func (l *rateLimit) set(perSecond, burst int, interval time.Duration, burstOverride int) {
	if interval == 0 {
		interval = time.Second / time.Duration(perSecond)
	}
	if burstOverride != 0 {
		burst = burstOverride
	}
	l.interval, l.tolerance = int64(interval), int64(interval)*int64(burst-1)
}

// allow reports whether an event at now (ns) is within the limit, and if
// so spends its token.
func (l *rateLimit) allow(now int64) bool {
	if l.interval <= 0 {
		return true
	}
	for {
		tat := l.tat.Load() // atomic, row wtLimit.tat, qwLimit.tat: other callers update it by CAS
		if tat-now > l.tolerance {
			return false
		}
		// CAS: two callers allowed from one tat would spend one token.
		if l.tat.CompareAndSwap(tat, max(tat, now)+l.interval) { // atomic, row wtLimit.tat, qwLimit.tat
			return true
		}
	}
}
