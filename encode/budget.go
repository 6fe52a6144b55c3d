package encode

// The work budget of one record, on the fast paths and the general one.

import "log/slog"

// The work of one record (and of one WithAttrs or Named call) is bounded:
// maxDepth alone does not bound it, since a LogValuer whose group holds
// itself twice doubles the work at every level. The
// general code counts every attribute it writes or descends into, and the
// fast paths (JSON, Text and Logfmt scalars, the zap formats) every
// attribute they write; when a
// record has used maxRecordAttrs of them, or written maxRecordBytes, the
// attribute at hand is written with the value TruncatedValue and the
// record's remaining attributes are skipped. (Variables only so that tests
// can lower them; nothing else changes them.)
var (
	maxRecordAttrs = 1 << 16
	maxRecordBytes = 16 << 20
)

// TruncatedValue is the value written, under the key of the attribute at
// hand, where a record ran out of its work budget: more than 65536
// attributes written or descended into (groups, LogValuers), or more than
// 16 MiB written. The record's later attributes are left out.
const TruncatedValue = "!TRUNCATED: attribute budget exceeded"

// budget is a record's remaining allowance.
type budget struct {
	left      int  // attributes the general code may still write or descend into
	limit     int  // length of the output buffer past which nothing more is written
	truncated bool // TruncatedValue has been written; skip everything else
}

func newBudget(start int) budget {
	return budget{left: maxRecordAttrs, limit: start + maxRecordBytes}
}

// fits reports whether the fast paths may write one more scalar attribute
// at offset n of the output; each one written is taken with take. When it
// does not fit, the attribute goes to the general code, whose spend writes
// TruncatedValue.
func (bud *budget) fits(n int) bool { return bud.left > 0 && n <= bud.limit }

// take counts one attribute the fast paths wrote.
func (bud *budget) take() { bud.left-- }

// spend takes one attribute from the budget and reports whether a may be
// written. Once the budget is spent it writes a's key with TruncatedValue,
// the first time, and reports whether it wrote that.
func (s *state) spend(a slog.Attr) (ok, wrote bool) {
	if s.bud.left > 0 && len(s.buf) <= s.bud.limit {
		s.bud.left--
		return true, false
	}
	if s.bud.truncated {
		return false, false
	}
	s.bud.truncated = true
	s.appendKey(a.Key)
	s.appendString(TruncatedValue)
	return false, true
}
