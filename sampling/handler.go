package sampling

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"

	"github.com/asyncbus/asyncbus"
)

// DefaultLoggerKey is the key of the logger name that markers carry when
// the wrapped handler does not write logger names itself.
const DefaultLoggerKey = "logger"

// Handler is a slog.Handler that samples records before passing them to
// the handler it wraps. Handlers derived with WithAttrs, WithGroup and Named
// share its Sampler.
type Handler struct {
	s          *Sampler
	next       slog.Handler // receives kept records
	base       slog.Handler // next before WithAttrs/WithGroup: receives markers
	name       string       // logger name, part of the sampling key
	loggerHash uint64       // hash of name, computed once in Named
	namesOwn   bool         // base writes the logger name itself (asyncbus)
	to         *target      // where markers of h's keys go; one per Handler/Named call
}

// NewHandler returns a Handler that samples records under cfg and passes
// the kept ones to next, or an error for an invalid Config or a nil next.
func NewHandler(next slog.Handler, cfg Config) (*Handler, error) {
	s, err := NewSampler(cfg)
	if err != nil {
		return nil, err
	}
	return s.Handler(next)
}

// Handler returns a Handler that samples with s and passes the kept records
// to next; several handlers (for several outputs) may share one Sampler.
func (s *Sampler) Handler(next slog.Handler) (*Handler, error) {
	if next == nil {
		return nil, errNilNext
	}
	h := &Handler{s: s, next: next, base: next}
	if ab, ok := next.(*asyncbus.Handler); ok {
		h.name, h.namesOwn = ab.Name(), true
	}
	h.loggerHash = s.nameHash(h.name)
	h.to = h.newTarget()
	return h, nil
}

// newTarget returns the marker target of h's keys: its base handler.
func (h *Handler) newTarget() *target {
	return &target{h: h.base, addLogger: !h.namesOwn && h.name != ""}
}

var errNilNext = errors.New("sampling: nil next handler")

func (s *Sampler) nameHash(name string) uint64 {
	if name == "" {
		return 0
	}
	return maphash.String(s.seed, name) * 0xd6e8feb86659fd93
}

// Sampler returns the Sampler shared by h and the handlers derived from it.
func (h *Handler) Sampler() *Sampler { return h.s }

// Enabled reports whether the wrapped handler is enabled at level l.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle passes r on unless sampling drops it, in which case it returns
// nil without calling the wrapped handler. The decision is one hash of the
// message and one compare-and-swap; it allocates nothing, except when a
// slot drops a key it holds no count for (the key is published for the
// marker): once per key, or repeatedly for more than slotWays colliding
// keys that alternate in one slot (evicting a key with pending records
// also writes its marker).
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	s := h.s
	c := s.cfg.Load() // the configuration for this whole decision
	if c.Off {
		return h.next.Handle(ctx, r)
	}
	tick := s.window(c, r.Time)
	if r.Level >= c.exempt() || s.decideAt(c, tick, r.Level, r.Message, h.name, h.loggerHash, h.to) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs returns a Handler whose kept records carry attrs.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	h2.next = h.next.WithAttrs(attrs)
	return &h2
}

// WithGroup returns a Handler that qualifies later attributes with name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.next = h.next.WithGroup(name)
	return &h2
}

// Named returns a Handler for the logger called name below h's own
// (joined with "."). The logger name is part of the sampling key. When the
// wrapped handler is an *asyncbus.Handler, its Named is used, so records
// and markers carry the name as asyncbus writes it; otherwise markers carry
// it under DefaultLoggerKey.
func (h *Handler) Named(name string) *Handler {
	if name == "" {
		return h
	}
	h2 := *h
	if ab, ok := h.next.(*asyncbus.Handler); ok {
		h2.next = ab.Named(name)
		if bb, ok := h.base.(*asyncbus.Handler); ok {
			h2.base = bb.Named(name)
		}
		h2.name = h2.next.(*asyncbus.Handler).Name()
	} else {
		h2.name = name
		if h.name != "" {
			h2.name = h.name + "." + name
		}
	}
	h2.loggerHash = h.s.nameHash(h2.name)
	h2.to = h2.newTarget()
	return &h2
}

var _ slog.Handler = (*Handler)(nil)
