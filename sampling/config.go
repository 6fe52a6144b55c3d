package sampling

// The configuration: Config, its validation, and its swapping at run time.

import (
	"fmt"
	"log/slog"
	"time"
)

// Config says how a Sampler samples.
type Config struct {
	// Tick is the sampling window; zero means one second. Below a
	// millisecond is an error. Windows follow the records' own times, up
	// to one tick after the wall clock's: a record stamped later than that
	// (a skewed remote clock, a bad caller) counts in that window, so it
	// cannot move the sampling ahead of the clock (see the package doc).
	Tick time.Duration
	// First is how many records of each key are kept in each tick.
	First int
	// Thereafter: after the first First records of a key in a tick, every
	// Thereafter-th is kept; zero keeps none of them.
	Thereafter int
	// Exempt is the level from which records are never sampled; nil means
	// slog.LevelError. A *slog.LevelVar may be used. To sample every level,
	// use a level above all others, such as slog.Level(math.MaxInt).
	Exempt slog.Leveler
	// Slots is the size of the counter table, rounded up to a power of
	// two; zero means 1024 (64 KiB). More slots mean fewer collisions
	// between keys. It is fixed when the Sampler is made: SetConfig
	// accepts only zero or the same value.
	Slots int
	// Off passes every record on unsampled and uncounted, for switching
	// sampling off at run time without rebuilding loggers.
	Off bool
}

const (
	defaultTick  = time.Second
	defaultSlots = 1024
	maxSlots     = 1 << 20
)

// config is a validated Config, swapped atomically as a whole.
type config struct {
	Config
	tickNs int64
	// gen changes whenever Tick changes: counters from another generation
	// count in windows of another length and are reset, not compared.
	gen uint8
	// exemptLevel is Exempt resolved once when it is a plain slog.Level,
	// so that the common case needs no interface call per record.
	exemptLevel slog.Level
	dynamic     bool
}

func (c *config) exempt() slog.Level {
	if c.dynamic {
		return c.Exempt.Level()
	}
	return c.exemptLevel
}

func validate(cfg Config) (*config, error) {
	c := &config{Config: cfg}
	switch {
	case cfg.Tick < 0:
		return nil, fmt.Errorf("sampling: negative Tick %v", cfg.Tick)
	case cfg.Tick == 0:
		c.Tick = defaultTick
	case cfg.Tick < time.Millisecond:
		return nil, fmt.Errorf("sampling: Tick %v is below the 1ms minimum", cfg.Tick)
	}
	c.tickNs = int64(c.Tick)
	if cfg.First < 0 || cfg.Thereafter < 0 {
		return nil, fmt.Errorf("sampling: negative First (%d) or Thereafter (%d)", cfg.First, cfg.Thereafter)
	}
	// A slot's count saturates at 2^32-1 (countMask). Compared as int64:
	// the bound does not fit a 32-bit int, all of whose values are below it.
	if int64(cfg.First) > 1<<32-2 || int64(cfg.Thereafter) > 1<<32-2 {
		return nil, fmt.Errorf("sampling: First (%d) or Thereafter (%d) above 2^32-2", cfg.First, cfg.Thereafter)
	}
	if cfg.Slots < 0 || cfg.Slots > maxSlots {
		return nil, fmt.Errorf("sampling: Slots %d outside 0..%d", cfg.Slots, maxSlots)
	}
	switch l := cfg.Exempt.(type) {
	case nil:
		c.exemptLevel = slog.LevelError
	case slog.Level:
		c.exemptLevel = l
	default:
		c.dynamic = true
	}
	return c, nil
}

// Config returns the configuration in force, with defaults filled in.
func (s *Sampler) Config() Config { return s.cfg.Load().Config }

// SetConfig swaps the configuration; records handled after it returns are
// decided under cfg. Counts already made in the current tick are kept
// (unless Tick changes, which starts new windows). An invalid cfg is
// rejected and the old one stays.
func (s *Sampler) SetConfig(cfg Config) error {
	c, err := validate(cfg)
	if err != nil {
		return err
	}
	if cfg.Slots != 0 && cfg.Slots != len(s.slots) {
		return fmt.Errorf("sampling: Slots cannot change from %d to %d at run time", len(s.slots), cfg.Slots)
	}
	c.Slots = len(s.slots)
	s.setMu.Lock()
	defer s.setMu.Unlock()
	old := s.cfg.Load()
	c.gen = old.gen
	if c.tickNs != old.tickNs {
		c.gen++
	}
	s.cfg.Store(c) // publishes the whole immutable config at once
	return nil
}
