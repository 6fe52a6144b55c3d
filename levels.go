package asyncbus

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/asyncbus/asyncbus/encode"
)

// The two levels asyncbus names beyond slog's four. The JSON, Text, Logfmt
// and Console formats print them as slog does, DEBUG-4 and ERROR+4, or as
// TRACE and FATAL with Options.Encoding.TraceFatalNames; the other formats
// use their backends' names (zap's "fatal", GCP's "CRITICAL"). Every other
// level prints exactly as slog prints it.
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
	l, err := parseLevel(s)
	if err != nil {
		return 0, fmt.Errorf("asyncbus: %w", err)
	}
	return l, nil
}

// parseLevel is ParseLevel with errors that carry no package prefix, so that
// the rule parser can say which rule they belong to.
func parseLevel(s string) (slog.Level, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, errors.New("empty level")
	}
	n, err := strconv.Atoi(in)
	if err == nil {
		return slog.Level(n), nil
	}
	if errors.Is(err, strconv.ErrRange) { // beyond int on this platform (32 or 64 bits)
		return 0, fmt.Errorf("level %q out of range", s)
	}
	name, offset := in, 0
	if i := strings.IndexAny(in, "+-"); i > 0 {
		name = in[:i]
		n, err := strconv.Atoi(in[i:])
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("level %q: offset %q out of range", s, in[i:])
		}
		if err != nil {
			return 0, fmt.Errorf("level %q: bad offset %q", s, in[i:])
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
		return 0, fmt.Errorf("unknown level %q (want trace, debug, info, warn, error, fatal, an offset like warn+2, or an integer)", s)
	}
	// Both bounds are int's own, so the check holds for 32- and 64-bit int.
	if (offset > 0 && int(base) > math.MaxInt-offset) || (offset < 0 && int(base) < math.MinInt-offset) {
		return 0, fmt.Errorf("level %q: offset %q out of range", s, in[len(name):])
	}
	l := base + slog.Level(offset)
	return l, nil
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
// Logger names match without regard to case, as level names do: the rule
// "DB=debug" governs the loggers "db", "DB" and "Db.sql" alike, and
// "db=info,DB=warn" is refused as setting one logger twice. Rules keep and
// print names in lower case (String).
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
	byName map[string]slog.Level // keyed by foldName of the rule's logger name
}

// foldName is the form in which logger names are compared: lower case, so
// that a rule matches its logger whatever the case of either. It allocates
// only for a name with an upper-case letter.
func foldName(name string) string { return strings.ToLower(name) }

// ParseLevelRules parses a rule string such as "info,db=debug,http.client=warn".
// An empty string means Info for everyone. Logger names are dot-separated
// parts of letters, digits, '_', '-' and '/'. An error names the rule at
// fault, by position and text, and says what is wrong with it:
//
//	asyncbus: level rules "info,db=": rule 2 "db=": empty level
//
// On error the rules are nil; LevelRulesFromEnv always returns usable rules.
func ParseLevelRules(rules string) (*LevelRules, error) {
	spec, err := parseRuleSpec(rules)
	if err != nil {
		return nil, fmt.Errorf("asyncbus: %w", err)
	}
	return newLevelRules(spec), nil
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
//
// The rules it returns are never nil, so that logging starts with usable
// rules whatever the error: when the variable is malformed it returns def's
// rules together with an error naming the variable and the bad rule; when
// def is malformed too (or the variable is unset and def is malformed) it
// returns Info for every logger together with the error. Show that error
// (log it once the handler is made, as the example does): dropped, a typo
// in the variable silently gives the default levels.
func LevelRulesFromEnv(name, def string) (*LevelRules, error) {
	var envErr error
	if v, ok := os.LookupEnv(name); ok && strings.TrimSpace(v) != "" {
		spec, err := parseRuleSpec(v)
		if err == nil {
			return newLevelRules(spec), nil
		}
		envErr = fmt.Errorf("$%s: %w", name, err)
	}
	spec, err := parseRuleSpec(def)
	switch {
	case err != nil && envErr != nil:
		return newLevelRules(infoForAll()), fmt.Errorf("asyncbus: %w; default: %w; using info for every logger", envErr, err)
	case err != nil:
		return newLevelRules(infoForAll()), fmt.Errorf("asyncbus: default: %w; using info for every logger", err)
	case envErr != nil:
		return newLevelRules(spec), fmt.Errorf("asyncbus: %w; using the default %q", envErr, def)
	}
	return newLevelRules(spec), nil
}

func newLevelRules(spec ruleSpec) *LevelRules {
	return &LevelRules{spec: spec, slots: map[string]*levelSlot{}}
}

// infoForAll is the rule set of an empty rule string: Info for every logger.
func infoForAll() ruleSpec {
	return ruleSpec{def: slog.LevelInfo, byName: map[string]slog.Level{}}
}

// parseRuleSpec parses a comma-separated rule string. Its errors name the
// whole string, the rule at fault by its position (counting from 1, as the
// commas split it) and text, and what is wrong with it; they carry no
// package prefix.
func parseRuleSpec(rules string) (ruleSpec, error) {
	spec := infoForAll()
	defaultRule := 0 // position of the bare-level rule, 0 while none was seen
	byRule := map[string]int{}
	for i, raw := range strings.Split(rules, ",") {
		pos := i + 1
		part := strings.TrimSpace(raw)
		if part == "" {
			continue
		}
		bad := func(format string, args ...any) (ruleSpec, error) {
			return ruleSpec{}, fmt.Errorf("level rules %q: rule %d %q: %s", rules, pos, part, fmt.Sprintf(format, args...))
		}
		name, lvl, hasName := strings.Cut(part, "=")
		if !hasName {
			l, err := parseLevel(part)
			if err != nil {
				if strings.ContainsAny(part, ";: \t") {
					return bad("%v (rules are separated by ',')", err)
				}
				return bad("%v", err)
			}
			if defaultRule != 0 {
				return bad("a second default level (rule %d is the default; other rules are name=level)", defaultRule)
			}
			spec.def, defaultRule = l, pos
			continue
		}
		name = strings.TrimSpace(name)
		if err := checkLoggerName(name); err != nil {
			return bad("%v", err)
		}
		l, err := parseLevel(lvl)
		if err != nil {
			return bad("%v", err)
		}
		key := foldName(name)
		if first, dup := byRule[key]; dup {
			return bad("logger %q already set by rule %d (logger names match in any case)", name, first)
		}
		spec.byName[key], byRule[key] = l, pos
	}
	return spec, nil
}

// checkLoggerName accepts the logger names a rule may name: one or more
// dot-separated parts, each made of letters, digits, '_', '-' and '/'
// (letters and digits in the Unicode sense). Anything else would be a typo
// the rule could never match, such as "info;db" from "info;db=debug".
func checkLoggerName(name string) error {
	if name == "" {
		return errors.New("empty logger name")
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			return fmt.Errorf("logger name %q has an empty part between dots", name)
		}
	}
	for _, c := range name {
		if unicode.IsLetter(c) || unicode.IsDigit(c) || strings.ContainsRune("._-/", c) {
			continue
		}
		msg := fmt.Sprintf("logger name %q has %q (allowed: letters, digits, '.', '_', '-', '/')", name, c)
		if strings.ContainsRune(";: \t", c) {
			msg += "; rules are separated by ','"
		}
		return errors.New(msg)
	}
	return nil
}

// levelFor finds the rule for name, which is folded (foldName): an exact
// match or the longest dotted prefix, else the default.
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

// Set replaces the rules; on error (see ParseLevelRules) it changes nothing.
// Handlers that already exist see the new levels at
// their next Enabled call.
func (r *LevelRules) Set(rules string) error {
	spec, err := parseRuleSpec(rules)
	if err != nil {
		return fmt.Errorf("asyncbus: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spec = spec
	for name, slot := range r.slots {
		slot.level.Store(int64(spec.levelFor(name))) // readers see either the old or the new level, both valid
	}
	return nil
}

// Level reports the level that applies to the logger called name (in any
// case).
func (r *LevelRules) Level(name string) slog.Level {
	return r.slot(name).Level()
}

// slot returns the shared slot for name, creating it on first use. Names
// that differ only in case share one slot.
func (r *LevelRules) slot(name string) *levelSlot {
	name = foldName(name)
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

// levelNow returns l's current level. The two common Levelers (a fixed
// Level and a *slog.LevelVar) are called directly rather than through the
// interface, which saves an indirect call on every record (SyncLevel's
// check, the flight recorder's).
func levelNow(l slog.Leveler) slog.Level {
	switch v := l.(type) {
	case slog.Level:
		return v
	case *slog.LevelVar:
		return v.Level()
	}
	return l.Level()
}

// slogLevelNames reports whether o's encoder prints LevelTrace and
// LevelFatal as slog does: in slog's formats and their relatives, unless
// Options.Encoding.TraceFatalNames asks for TRACE and FATAL.
func slogLevelNames(o *Options) bool {
	switch o.Format {
	case JSON, Text, Logfmt, Console:
		return !o.Encoding.TraceFatalNames
	}
	return false
}
