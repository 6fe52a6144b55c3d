package main

import (
	"errors"
	"log/slog"
	"strings"
)

// filter holds the user's -level and -match requests.
type filter struct {
	minLevel slog.Level
	hasLevel bool    // -level given
	matches  []match // -match, all of which must hold
}

// match is one -match key=value request.
type match struct{ key, value string }

// parseMatch reads "key=value" (the value may be empty).
func parseMatch(s string) (match, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return match{}, errors.New("-match wants key=value, got " + s)
	}
	return match{k, v}, nil
}

// parseMinLevel reads -level's value: a level name or slog form.
func parseMinLevel(s string) (slog.Level, error) {
	l, _, ok := parseLevel(s, false)
	if !ok {
		return 0, errors.New("-level: unknown level " + s + " (want trace, debug, info, warn, error, fatal or a form such as info+2)")
	}
	return l, nil
}

// passesUnparsed reports whether a line that is no record is shown: it has
// no level, so the level filter lets it through; it has no fields, so it
// matches no -match.
func (f *filter) passesUnparsed() bool { return len(f.matches) == 0 }

// passes reports whether record r (marker m) is shown. A record without a
// level passes the level filter; drop and other asyncbus markers pass both
// filters, since they report lost records whatever the view; sampling
// markers are filtered like the records they stand for.
func (f *filter) passes(r *record, m marker) bool {
	if m.kind == dropMarker || m.kind == otherMarker {
		return true
	}
	if f.hasLevel && r.hasLevel && r.level < f.minLevel {
		return false
	}
	for _, mt := range f.matches {
		if !r.matches(mt) {
			return false
		}
	}
	return true
}

// matches reports whether r has the field mt.key with the text mt.value:
// "msg", "logger", "level" (a level name, any case), or an attribute, a
// nested one by its dotted key.
func (r *record) matches(mt match) bool {
	switch mt.key {
	case "msg":
		if r.hasMsg && r.msg == mt.value {
			return true
		}
	case "logger":
		if r.logger != "" && r.logger == mt.value {
			return true
		}
	case "level":
		if l, _, ok := parseLevel(mt.value, false); ok && r.hasLevel && l == r.level {
			return true
		}
	}
	return attrsMatch(r.attrs, "", mt)
}

// attrsMatch looks for mt among attrs, whose keys carry prefix.
func attrsMatch(attrs []slog.Attr, prefix string, mt match) bool {
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindGroup {
			p := a.Key + "."
			if prefix != "" {
				p = prefix + p
			}
			if strings.HasPrefix(mt.key, p) && attrsMatch(a.Value.Group(), p, mt) {
				return true
			}
			continue
		}
		if len(prefix)+len(a.Key) == len(mt.key) && strings.HasPrefix(mt.key, prefix) && mt.key[len(prefix):] == a.Key && a.Value.String() == mt.value {
			return true
		}
	}
	return false
}
