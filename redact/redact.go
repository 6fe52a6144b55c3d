// Package redact masks secrets in log attributes. A Redactor is installed
// as a ReplaceAttr function (asyncbus.Options.ReplaceAttr, or
// slog.HandlerOptions.ReplaceAttr); when no redaction is wanted it is simply
// not installed, and costs nothing.
//
//	r := redact.New(redact.Config{
//		Keys:   []string{"password", "api_key"},
//		Paths:  []string{"req.headers.authorization"},
//		Values: []redact.Matcher{redact.BearerToken, redact.JWT},
//	})
//	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: r.ReplaceAttr})
//
// It redacts by attribute key at any depth, by group path from the top, and
// by value pattern inside string values and error messages. Both asyncbus
// and slog's own handlers call ReplaceAttr for the attributes of WithAttrs
// once, when the derived handler is made, and for each record's attributes
// (and its built-in msg) per record; Redactions counts each redacted
// attribute once per call, so an attribute of WithAttrs state counts once,
// not once per record.
//
// ReplaceAttr is never called with a group-valued attribute: a key or path
// naming a group therefore redacts every attribute inside it, one by one,
// and the group's structure stays visible.
//
// A Redactor sees only what the handler passes to ReplaceAttr. slog's
// handlers and asyncbus's JSON, Text, Logfmt and Console formats pass the
// message (key slog.MessageKey), so a secret in a message is masked there;
// the zap formats (asyncbus.ZapJSON, asyncbus.ZapConsole) do not, as zap's
// encoders do not, and write the message, level, logger name and caller as
// they are: with those formats keep secrets out of messages, or put them in
// attributes.
//
// An error value whose Error method panics (an error interface holding a
// nil pointer) is left as it is, uninspected and uncounted, for the
// handler to write as it would without the Redactor (slog writes "<nil>").
package redact

import (
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
)

// DefaultMask replaces redacted values when Config.Mask is empty.
const DefaultMask = "[REDACTED]"

// Config says what a Redactor masks.
type Config struct {
	// Keys are attribute keys redacted wherever they occur, compared without
	// regard to ASCII case (other letters must match exactly). A key that names a group (slog.Group, WithGroup)
	// redacts every attribute inside that group.
	Keys []string
	// Paths are dotted paths from the top level, group names then key
	// ("req.headers.authorization"), compared without regard to ASCII case.
	// Groups opened with WithGroup are part of the path. A path that names a
	// group redacts every attribute inside it.
	Paths []string
	// Values find secrets inside string values and inside the messages of
	// error values (which then become strings; one whose Error panics is
	// left as it is). Each match is replaced by
	// the mask; the rest of the string is kept. Values of other kinds
	// (numbers, structs, fmt.Stringers, []byte) are not inspected. Nil
	// matchers are skipped.
	Values []Matcher
	// Mask replaces a redacted value or match; empty means DefaultMask.
	Mask string
}

// A Matcher finds the first secret in s and returns its byte offsets, or
// (-1, -1) when s holds none. An empty match (start == end) counts as none.
type Matcher func(s string) (start, end int)

// Redactor masks attributes as its Config says. It is safe for concurrent
// use and never modified after New.
type Redactor struct {
	keys map[string]struct{} // lower-cased Config.Keys
	// keyLens has bit n set when a key of n bytes (n < 64) is in keys, and
	// bit 63 also for every longer key: most keys are rejected by length
	// without a map lookup.
	keyLens uint64
	paths   [][]string // Config.Paths split on '.', lower-cased
	values  []Matcher
	mask    slog.Value
	maskS   string
	// n counts redacted attributes. Add and Load are atomic: ReplaceAttr
	// runs concurrently on every logging goroutine and the total needs no
	// ordering with anything else.
	n atomic.Uint64
}

// New returns a Redactor for cfg. The configuration is copied.
func New(cfg Config) *Redactor {
	r := &Redactor{keys: make(map[string]struct{}, len(cfg.Keys)), maskS: cfg.Mask}
	if r.maskS == "" {
		r.maskS = DefaultMask
	}
	r.mask = slog.StringValue(r.maskS)
	for _, k := range cfg.Keys {
		r.keys[asciiLower(k)] = struct{}{}
		r.keyLens |= 1 << min(len(k), 63)
	}
	for _, p := range cfg.Paths {
		r.paths = append(r.paths, strings.Split(asciiLower(p), "."))
	}
	for _, m := range cfg.Values {
		if m != nil {
			r.values = append(r.values, m)
		}
	}
	return r
}

// Redactions returns how many attributes have been redacted so far.
func (r *Redactor) Redactions() uint64 { return r.n.Load() }

// ReplaceAttr is the redacting ReplaceAttr function. It allocates only
// when it masks part of a string (the new string) or inspects an error
// value (the error's message).
func (r *Redactor) ReplaceAttr(groups []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindLogValuer {
		// Handlers resolve before calling ReplaceAttr; a direct caller may not.
		a.Value = a.Value.Resolve()
	}
	if r.keyRedacted(groups, a.Key) {
		r.n.Add(1)
		a.Value = r.mask
		return a
	}
	if len(r.values) == 0 {
		return a
	}
	var s string
	switch a.Value.Kind() {
	case slog.KindString:
		s = a.Value.String()
	case slog.KindAny:
		err, ok := a.Value.Any().(error)
		if !ok || err == nil {
			return a
		}
		if s, ok = errorText(err); !ok {
			return a
		}
	default:
		return a
	}
	if masked, ok := r.maskString(s); ok {
		r.n.Add(1)
		a.Value = slog.StringValue(masked)
	}
	return a
}

// errorText returns err's message, or ok false when err.Error panics: an
// error interface holding a nil pointer whose Error method dereferences it.
// Such a value is left as it is, for the handler to write as it writes it
// without a Redactor (slog's handlers recover and write "<nil>"); it has no
// message to inspect.
func errorText(err error) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = "", false
		}
	}()
	return err.Error(), true
}

// Then returns a ReplaceAttr function that redacts, then passes the result
// to next (for example one that drops the time). Keys are matched before
// next can rename them. A nil next gives ReplaceAttr itself.
func (r *Redactor) Then(next func(groups []string, a slog.Attr) slog.Attr) func(groups []string, a slog.Attr) slog.Attr {
	if next == nil {
		return r.ReplaceAttr
	}
	return func(groups []string, a slog.Attr) slog.Attr {
		return next(groups, r.ReplaceAttr(groups, a))
	}
}

// keyRedacted reports whether key, or one of the groups it sits in,
// matches Config.Keys or Config.Paths.
func (r *Redactor) keyRedacted(groups []string, key string) bool {
	if len(r.keys) > 0 {
		if r.hasKey(key) {
			return true
		}
		for _, g := range groups {
			if r.hasKey(g) {
				return true
			}
		}
	}
	for _, p := range r.paths {
		if len(p) > len(groups)+1 {
			continue
		}
		match := true
		for i, seg := range p {
			name := key
			if i < len(groups) {
				name = groups[i]
			}
			if !asciiEqualFold(seg, name) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// hasKey looks k up in the lower-cased key set without allocating for keys
// of up to 64 bytes.
func (r *Redactor) hasKey(k string) bool {
	if r.keyLens&(1<<min(len(k), 63)) == 0 {
		return false // no key of this length (ASCII lower-casing keeps lengths)
	}
	upper := false
	for i := 0; i < len(k); i++ {
		if c := k[i]; 'A' <= c && c <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		_, ok := r.keys[k]
		return ok
	}
	if len(k) > 64 {
		_, ok := r.keys[asciiLower(k)]
		return ok
	}
	var buf [64]byte
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	_, ok := r.keys[string(buf[:len(k)])] // the compiler does not allocate for this conversion
	return ok
}

// maskString replaces every match of every matcher in s by the mask. It
// reports false, and allocates nothing, when nothing matched.
func (r *Redactor) maskString(s string) (string, bool) {
	changed := false
	for _, m := range r.values {
		start, end := m(s)
		if start < 0 || end <= start || end > len(s) {
			continue
		}
		var b strings.Builder
		rest := s
		for start >= 0 && end > start && end <= len(rest) {
			b.WriteString(rest[:start])
			b.WriteString(r.maskS)
			rest = rest[end:]
			start, end = m(rest)
		}
		b.WriteString(rest)
		s = b.String()
		changed = true
	}
	return s, changed
}

// Regexp returns a Matcher for the leftmost match of re.
func Regexp(re *regexp.Regexp) Matcher {
	return func(s string) (int, int) {
		loc := re.FindStringIndex(s)
		if loc == nil {
			return -1, -1
		}
		return loc[0], loc[1]
	}
}

// BearerToken matches the credential of an HTTP bearer authorization
// ("Bearer <token>", any case, one or more spaces): the token is masked and
// the word "Bearer" kept. The token is the RFC 6750 token68 character set.
func BearerToken(s string) (int, int) {
	const word = "bearer"
	for i := 0; i+len(word) < len(s); i++ {
		n := strings.IndexAny(s[i:], "bB")
		if n < 0 || i+n+len(word) >= len(s) {
			break
		}
		i += n
		if !strings.EqualFold(s[i:i+len(word)], word) {
			continue
		}
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		j := i + len(word)
		sp := j
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if j == sp {
			continue
		}
		k := j
		for k < len(s) && isToken68(s[k]) {
			k++
		}
		for k < len(s) && s[k] == '=' {
			k++
		}
		if k > j {
			return j, k
		}
	}
	return -1, -1
}

// JWT matches a JSON Web Token in compact serialization: three base64url
// segments separated by dots, the first starting "eyJ" (a JSON object). The
// signature segment may be empty (unsecured tokens). The whole token is
// masked.
func JWT(s string) (int, int) {
	for i := 0; i+3 <= len(s); i++ {
		n := strings.Index(s[i:], "eyJ")
		if n < 0 {
			break
		}
		i += n
		if i > 0 && isB64URL(s[i-1]) {
			continue
		}
		j := i
		for j < len(s) && isB64URL(s[j]) {
			j++
		}
		if j == len(s) || s[j] != '.' {
			continue
		}
		k := j + 1
		for k < len(s) && isB64URL(s[k]) {
			k++
		}
		if k == j+1 || k == len(s) || s[k] != '.' {
			continue
		}
		e := k + 1
		for e < len(s) && isB64URL(s[e]) {
			e++
		}
		return i, e
	}
	return -1, -1
}

// asciiLower lower-cases the ASCII letters of s only, keeping its length.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// asciiEqualFold reports whether lower (already lower-case) equals s
// without regard to ASCII case.
func asciiEqualFold(lower, s string) bool {
	if len(lower) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

func isToken68(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
