package encode

import (
	"log/slog"
	"slices"
)

// The one deliberate difference from log/slog (README, "Differences from
// log/slog"): a group that turns out empty (it has attributes, but none
// writes anything: all empty, or removed by ReplaceAttr) is taken back
// whole. slog takes back only its bytes and keeps the state the group
// opened for the attributes that follow it: its separator (none, so JSON
// lacks a ',': `"msg":"m""a":1`, golang/go#62152), its key prefix (Text
// writes g.a=1 for a top-level a, and a nested group's closing can cut a
// rune of the prefix in two) and its ReplaceAttr group path (a ReplaceAttr
// that drops attributes in groups drops the top-level ones after it too,
// golang/go#62512's territory). This encoder writes what slog writes
// without that bug: valid JSON, and the keys and groups of the attributes
// as given.
//
// slogFixed models it exactly, so that the tests can still compare with
// slog byte for byte: it removes from the inputs every group that turns
// out empty, deciding that the way slog's handleState.appendAttr does
// (resolving LogValuers and applying the pure ReplaceAttr functions of the
// tests with the same group paths), and wraps ReplaceAttr so that a group
// it returns is pruned the same way. Given inputs without such a group, slog
// takes no rollback path, and the pruned inputs are the inputs themselves:
// the exception applies exactly where slog's bug does.
type slogFixed struct {
	rep    func([]string, slog.Attr) slog.Attr
	json   bool
	pruned int // groups removed
}

// writes reports whether slog's appendAttr reports that a, at group path
// gs, wrote something. As in slog, a nil gs (a built-in attribute's) stays
// nil inside groups: ReplaceAttr sees no groups there.
func (p *slogFixed) writes(a slog.Attr, gs []string) bool {
	a.Value = a.Value.Resolve()
	if p.rep != nil && a.Value.Kind() != slog.KindGroup {
		a = p.rep(gs, a)
		a.Value = a.Value.Resolve()
	}
	if a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil {
		return false // slog's Attr.isEmpty
	}
	if a.Value.Kind() == slog.KindAny {
		if src, ok := a.Value.Any().(*slog.Source); ok {
			if src == nil || *src == (slog.Source{}) {
				return false
			}
			if !p.json {
				return true
			}
			a.Value = sourceGroup(src)
		}
	}
	if a.Value.Kind() != slog.KindGroup {
		return true
	}
	members := a.Value.Group()
	if len(members) == 0 {
		return true // slog writes nothing for it, but reports true
	}
	if a.Key != "" && gs != nil {
		gs = append(slices.Clip(gs), a.Key)
	}
	wrote := false
	for _, m := range members {
		if p.writes(m, gs) {
			wrote = true
		}
	}
	return wrote
}

// attr returns a, an attribute slog will apply ReplaceAttr to, with the
// groups inside it that turn out empty removed; keep is false when a is
// itself such a group. An unchanged a is returned as it is (a LogValuer
// unresolved).
func (p *slogFixed) attr(a slog.Attr, gs []string) (_ slog.Attr, keep, changed bool) {
	v := a.Value.Resolve()
	if v.Kind() != slog.KindGroup || len(v.Group()) == 0 {
		return a, true, false // not a group: ReplaceAttr's result is pruned by replace
	}
	if !p.writes(a, gs) {
		p.pruned++
		return a, false, true
	}
	if a.Key != "" && gs != nil {
		gs = append(slices.Clip(gs), a.Key)
	}
	members, changed := p.attrs(v.Group(), gs)
	if !changed {
		return a, true, false
	}
	return slog.Attr{Key: a.Key, Value: slog.GroupValue(members...)}, true, true
}

// attrs prunes a list of attributes at group path gs.
func (p *slogFixed) attrs(as []slog.Attr, gs []string) (_ []slog.Attr, changed bool) {
	out := make([]slog.Attr, 0, len(as))
	for _, a := range as {
		a2, keep, ch := p.attr(a, gs)
		changed = changed || ch
		if keep {
			out = append(out, a2)
		}
	}
	if !changed {
		return as, false
	}
	return out, true
}

// replace is the ReplaceAttr to give slog: p.rep, whose result is pruned
// (slog writes a group it returns member by member, applying ReplaceAttr
// to each). A result that turns out empty becomes the empty Attr, which
// slog skips without a trace.
func (p *slogFixed) replace(gs []string, a slog.Attr) slog.Attr {
	a = p.rep(gs, a)
	v := a.Value.Resolve()
	if v.Kind() == slog.KindAny {
		if src, ok := v.Any().(*slog.Source); ok && p.json && src != nil && *src != (slog.Source{}) {
			if !p.writes(slog.Attr{Key: a.Key, Value: sourceGroup(src)}, gs) {
				p.pruned++
				return slog.Attr{}
			}
		}
		return a
	}
	if v.Kind() != slog.KindGroup || len(v.Group()) == 0 {
		return a
	}
	// slog resolves the result and does not apply ReplaceAttr to a group
	// itself: prune it as an input attribute, resolved.
	a2, keep, changed := p.attr(slog.Attr{Key: a.Key, Value: v}, gs)
	switch {
	case !keep:
		return slog.Attr{}
	case changed:
		return a2
	}
	return a
}

// emptyGroupValuer resolves to an empty group.
type emptyGroupValuer struct{}

func (emptyGroupValuer) LogValue() slog.Value { return slog.GroupValue() }

// inputs returns the chain and record attributes with the groups that
// turn out empty removed, the ReplaceAttr to give slog, and whether
// anything was removed or may be removed by ReplaceAttr (then the pruning
// ReplaceAttr is returned; otherwise rep itself).
func (p *slogFixed) inputs(chain []step, r slog.Record) ([]step, slog.Record, func([]string, slog.Attr) slog.Attr) {
	gs := []string{} // not nil: slog tracks the groups of non-built-in attributes
	out := make([]step, len(chain))
	for i, s := range chain {
		out[i] = s
		if s.group != "" {
			gs = append(slices.Clip(gs), s.group)
			continue
		}
		if as, changed := p.attrs(s.attrs, gs); changed {
			if len(as) == 0 {
				as = []slog.Attr{} // not nil: step keeps meaning WithAttrs
			} else if !slices.ContainsFunc(as, func(a slog.Attr) bool {
				return a.Value.Kind() != slog.KindGroup || len(a.Value.Group()) > 0
			}) {
				// slog's withAttrs ignores a list of nothing but empty
				// groups, but one that also held a group that turned out
				// empty opens the handler's groups (an empty group counts
				// as written). Keep that: a LogValuer of an empty group
				// counts as written too, and is not ignored up front.
				as = append(as, slog.Any("", emptyGroupValuer{}))
			}
			out[i].attrs = as
		}
	}
	var rec []slog.Attr
	r.Attrs(func(a slog.Attr) bool { rec = append(rec, a); return true })
	if as, changed := p.attrs(rec, gs); changed {
		r2 := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
		r2.AddAttrs(as...)
		r = r2
	}
	rep := p.rep
	if rep != nil {
		rep = p.replace
	}
	return out, r, rep
}
