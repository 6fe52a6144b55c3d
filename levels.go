package asyncbus

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/asyncbus/asyncbus/encode"
)

// The two levels asyncbus names beyond slog's four. Every format prints them
// as TRACE and FATAL (Options.SlogLevelNames restores slog's DEBUG-4 and
// ERROR+4); every other level prints exactly as slog prints it.
const (
	// LevelTrace is below Debug, for very chatty diagnostics.
	LevelTrace = encode.LevelTrace
	// LevelFatal is above Error. By default records at this level are
	// written and synced before Handle returns (see Options.SyncLevel).
	LevelFatal = encode.LevelFatal
)

// ParseLevel parses a level name in any case ("trace", "DEBUG", "Info",
// "warn" or "warning", "error", "fatal"), a name with an offset in slog's
// style ("warn+2", "DEBUG-4"), or a plain integer ("-4", "12").
func ParseLevel(s string) (slog.Level, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("asyncbus: empty level")
	}
	if n, err := strconv.Atoi(in); err == nil {
		return slog.Level(n), nil
	}
	name, offset := in, 0
	if i := strings.IndexAny(in, "+-"); i > 0 {
		name = in[:i]
		n, err := strconv.Atoi(in[i:])
		if err != nil {
			return 0, fmt.Errorf("asyncbus: level %q: bad offset %q", s, in[i:])
		}
		offset = n
	}
	var base slog.Level
	switch strings.ToLower(name) {
	case "trace":
		base = LevelTrace
	case "debug":
		base = slog.LevelDebug
	case "info":
		base = slog.LevelInfo
	case "warn", "warning":
		base = slog.LevelWarn
	case "error":
		base = slog.LevelError
	case "fatal":
		base = LevelFatal
	default:
		return 0, fmt.Errorf("asyncbus: unknown level %q (want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer)", s)
	}
	return base + slog.Level(offset), nil
}

// levelName spells a level the way the encoders do: TRACE and FATAL for the
// two named levels, slog's spelling otherwise.
func levelName(l slog.Level) string {
	switch l {
	case LevelTrace:
		return "TRACE"
	case LevelFatal:
		return "FATAL"
	}
	return l.String()
}

// LevelRules holds per-logger level rules such as "info,db=debug,http.client=warn":
// a bare level is the default, and name=level sets the level of the logger
// with that name and of its descendants ("http.client" also governs
// "http.client.retry"); the longest matching name wins.
//
// Handlers created with Handler.Named read their level from a slot that the
// rules own, so Set takes effect on handlers that already exist, and the
// level check stays one atomic load. A LevelRules is safe for concurrent use.
type LevelRules struct {
	mu    sync.Mutex            // guards spec and slots; never taken on the logging path
	spec  ruleSpec              // the parsed rules now in force
	slots map[string]*levelSlot // one slot per logger name seen, updated by Set
}

// levelSlot is the level of one logger name. The logging path reads it with
// one atomic load; Set stores to it.
type levelSlot struct {
	level atomic.Int64 // an int64 holds any slog.Level; atomic so Set may change it while Enabled reads it
}

func (s *levelSlot) Level() slog.Level { return slog.Level(s.level.Load()) }

type ruleSpec struct {
	def    slog.Level
	byName map[string]slog.Level
}

// ParseLevelRules parses a rule string such as "info,db=debug,http.client=warn".
// An empty string means Info for everyone.
func ParseLevelRules(rules string) (*LevelRules, error) {
	spec, err := parseRuleSpec(rules)
	if err != nil {
		return nil, err
	}
	return &LevelRules{spec: spec, slots: map[string]*levelSlot{}}, nil
}

// MustParseLevelRules is ParseLevelRules that panics on a malformed rule
// string; for package-level variables with constant rules.
func MustParseLevelRules(rules string) *LevelRules {
	r, err := ParseLevelRules(rules)
	if err != nil {
		panic(err)
	}
	return r
}

// LevelRulesFromEnv reads rules from the environment variable name (for
// example "ASYNCBUS_LEVEL"). An unset or empty variable gives def's rules.
func LevelRulesFromEnv(name, def string) (*LevelRules, error) {
	if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
		r, err := ParseLevelRules(v)
		if err != nil {
			return nil, fmt.Errorf("asyncbus: $%s: %w", name, err)
		}
		return r, nil
	}
	return ParseLevelRules(def)
}

func parseRuleSpec(rules string) (ruleSpec, error) {
	spec := ruleSpec{def: slog.LevelInfo, byName: map[string]slog.Level{}}
	sawDefault := false
	for _, part := range strings.Split(rules, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, lvl, hasName := strings.Cut(part, "=")
		if !hasName {
			if sawDefault {
				return ruleSpec{}, fmt.Errorf("asyncbus: level rules %q: more than one default level", rules)
			}
			l, err := ParseLevel(part)
			if err != nil {
				return ruleSpec{}, err
			}
			spec.def, sawDefault = l, true
			continue
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return ruleSpec{}, fmt.Errorf("asyncbus: level rules %q: empty logger name in %q", rules, part)
		}
		l, err := ParseLevel(lvl)
		if err != nil {
			return ruleSpec{}, err
		}
		if _, dup := spec.byName[name]; dup {
			return ruleSpec{}, fmt.Errorf("asyncbus: level rules %q: logger %q named twice", rules, name)
		}
		spec.byName[name] = l
	}
	return spec, nil
}

// levelFor finds the rule for name: an exact match or the longest dotted
// prefix, else the default.
func (s ruleSpec) levelFor(name string) slog.Level {
	for n := name; n != ""; {
		if l, ok := s.byName[n]; ok {
			return l
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return s.def
}

// String renders the rules in force in their canonical form: the default
// first, then name=level sorted by name.
func (r *LevelRules) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spec.String()
}

func (s ruleSpec) String() string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := []string{strings.ToLower(levelName(s.def))}
	for _, n := range names {
		parts = append(parts, n+"="+strings.ToLower(levelName(s.byName[n])))
	}
	return strings.Join(parts, ",")
}

// Set replaces the rules. Handlers that already exist see the new levels at
// their next Enabled call.
func (r *LevelRules) Set(rules string) error {
	spec, err := parseRuleSpec(rules)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spec = spec
	for name, slot := range r.slots {
		slot.level.Store(int64(spec.levelFor(name))) // readers see either the old or the new level, both valid
	}
	return nil
}

// Level reports the level that applies to the logger called name.
func (r *LevelRules) Level(name string) slog.Level {
	return r.slot(name).Level()
}

// slot returns the shared slot for name, creating it on first use.
func (r *LevelRules) slot(name string) *levelSlot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots == nil {
		r.slots = map[string]*levelSlot{}
	}
	if s, ok := r.slots[name]; ok {
		return s
	}
	s := &levelSlot{}
	s.level.Store(int64(r.spec.levelFor(name))) // published to other goroutines through r.mu and the handler's construction
	r.slots[name] = s
	return s
}
