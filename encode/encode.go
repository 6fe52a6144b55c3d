// Package encode turns slog records into bytes appended to a caller-supplied
// buffer: JSON and text output byte-identical to the standard handlers of
// the log/slog the program is built with (but for two slog bugs, see
// below), strict logfmt, and a human-readable console format.
//
// An Encoder is immutable and safe for concurrent use. WithAttrs and
// WithGroup pre-encode their state once; Append does no locking and, for
// every slog.Kind and the KindAny values listed under Any values (user
// methods and LogValuers aside), no allocation.
//
// # Any values
//
// JSON, the cloud presets and the zap formats write a slog.Any value byte
// for byte as slog's JSONHandler writes it through encoding/json, but with
// a plan built once per type instead of encoding/json: structs (with
// encoding/json's field names, json tags and embedding rules), pointers,
// interfaces, slices, arrays, maps (in encoding/json's key order),
// strings, numbers, time.Time, []byte, json.Number, json.RawMessage and
// types with MarshalJSON or MarshalText methods (from Go 1.27, AppendText
// before MarshalText, as encoding/json there). encoding/json itself
// writes a struct whose json tags the Go releases read differently (a
// name encoding/json rejects; an option other than omitempty, omitzero
// and string, or inline other than on an embedded struct), on Go 1.27 a
// type with a MarshalJSONTo method or an AppendText method on its pointer
// only, and a whole value where encoding/json reports an error (slog
// then writes "!ERROR:" and its text), where a MarshalJSON result needs
// more than its whitespace removed, where two map keys are written alike,
// or where pointers, maps and slices nest more than 1000 deep.
//
// Text, Logfmt and Console write a slog.Any value as slog's TextHandler
// does: its MarshalText text, a byte slice quoted, or fmt's %+v text; the
// %+v text of a fmt.Stringer (not an error or fmt.Formatter) and of a
// slice of a basic type is written without fmt.
//
// # Differences from log/slog
//
// JSON and Text differ from slog's handlers only where slog itself is
// wrong. A group that turns out empty (it has attributes, but all are
// empty or removed by ReplaceAttr) leaves nothing behind here, while slog
// keeps its separator (JSON then lacks the ',' before the next key,
// golang/go#62152), its key prefix (Text) and its ReplaceAttr group path
// for the attributes that follow. The other formats follow the same rule.
// A JSON time outside years [0,9999] is slog's error string alone, as Go
// 1.27's slog writes it, where earlier slogs write the time after it,
// which is not JSON.
//
// JSON and Text follow the slog of the Go release the program is built
// with: from Go 1.27 (with encoding/json v2, its default), slog's JSON
// writes invalid UTF-8 as the character U+FFFD instead of the escape
// \ufffd, and its Text takes a value's text from AppendText before
// MarshalText; so does this package. Logfmt writes the escape \ufffd on
// every release.
//
// # Logfmt
//
// Logfmt lines start with ts (RFC 3339, milliseconds), level (lower case:
// trace, debug, info, warn, error, fatal, or slog's offset form such as
// "info+2") and msg; then source, the logger name, and the attributes. Group
// names and keys are joined with '.'. Keys are sanitized deterministically:
// every byte or rune that is a space or control character (<= 0x20 or
// 0x7f), '=', '"', invalid UTF-8, U+FFFD, a Unicode space or a non-printing
// rune is replaced by '_', and an empty key becomes "_". Values are written
// bare unless slog's TextHandler would quote them (empty, spaces, '=', '"',
// control or non-printing characters, invalid UTF-8); quoted values use JSON
// string escaping, which the go-logfmt decoder understands (invalid UTF-8
// bytes become U+FFFD). ReplaceAttr sees the built-ins under slog's keys
// (time, level, source, msg); a time attribute still keyed "time" afterwards
// is written as "ts".
//
// # Console
//
// Console lines are "15:04:05.000 LEVEL source message key=value ...",
// with the level padded to five characters, the time in the record time's
// location, source shortened to its last directory and file, groups dotted,
// and strings quoted the way slog's TextHandler quotes them, and also when
// they hold DEL, so no control character (C0, DEL, C1) or invalid UTF-8
// reaches the terminal unescaped. ReplaceAttr applies to the built-ins as in
// slog (time, level, source, msg, with nil groups): an empty result removes
// the column, a result of the built-in's own kind (time.Time, slog.Level,
// *slog.Source, string) fills it whatever its key, and any other result is
// written as key=value attributes in the column's place. With Options.Color
// the time and keys are dimmed and levels coloured.
//
// # Unique keys
//
// With Options.UniqueKeys each key appears once per object: a repeated key
// keeps its first position and takes its last value, as the OpenTelemetry
// SDK keeps a repeated attribute (and as a last-wins JSON decoder reads the
// repeats). Keys are compared as written, so after ReplaceAttr and logfmt's
// key sanitizing, and the built-in fields count: an attribute "msg" replaces
// the message in JSON. In JSON and ZapJSON this holds for every object of
// the line, and the object values of one key, from its last non-object value
// on, are merged (their keys unique in turn), as the dotted keys of Text and
// Logfmt keep the attributes of two groups of one name. Text and Logfmt
// apply it to the line's (dotted) keys, Console and ZapConsole to the
// attributes after their columns. A line without a repeated key costs one
// scan and allocates nothing; one with a repeat is rewritten.
//
// # Limits
//
// Groups nest at most 4096 deep (deeper ones are written as an error
// string), and the work of one record is bounded, in every format and
// for the record's attributes, the per-call extra ones and WithAttrs
// (whose budget is spent once, when the derived Encoder is made): once
// 65536 attributes have been written or descended into (groups,
// LogValuers), or 16 MiB of them written, the attribute at hand is
// written with the value TruncatedValue and the record's remaining
// attributes are left out. The message, and an attribute begun under
// 16 MiB, are written whole. slog has neither bound; a LogValuer whose
// group holds itself twice would otherwise take 2^4096 steps.
package encode

import (
	"log/slog"
	"slices"
	"time"
)

// Format selects the output format.
type Format int

const (
	// JSON output is byte-identical to slog.NewJSONHandler (see the
	// package doc for the two exceptions).
	JSON Format = iota
	// Text output is byte-identical to slog.NewTextHandler (see the
	// package doc for the exception).
	Text
	// Logfmt is strict logfmt (ts, level, msg; dotted group keys; sanitized keys).
	Logfmt
	// Console is a human format for development.
	Console
)

const (
	// LevelTrace is the level below Debug, printed "TRACE".
	LevelTrace = slog.Level(-8)
	// LevelFatal is the level above Error, printed "FATAL".
	LevelFatal = slog.Level(12)
)

// Options configures an Encoder.
type Options struct {
	// Format selects the output format.
	Format Format
	// AddSource adds the source position of the log call (records with PC 0 get none).
	AddSource bool
	// ReplaceAttr has the same meaning as slog.HandlerOptions.ReplaceAttr.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr
	// SlogLevelNames prints LevelTrace/LevelFatal the way slog does (DEBUG-4, ERROR+4).
	SlogLevelNames bool
	// Color makes the Console format emit ANSI colours. The caller decides
	// (terminal and NO_COLOR unset, or forced); other formats ignore it.
	Color bool
	// LoggerKey is the key for the logger name set by Named; default "logger".
	LoggerKey string
	// UniqueKeys writes each key once per object: a repeated key keeps its
	// first position and takes its last value, as the OpenTelemetry SDK
	// keeps a repeated attribute (see Unique keys in the package doc). Off
	// (the default), JSON and Text stay byte-identical to slog's handlers.
	UniqueKeys bool
	// SequenceKeys, with UniqueKeys, reserves the top-level keys "seq" and
	// "run" for the numbers a handler writes in front of each line
	// (asyncbus's Options.Features.Sequence): an attribute under either is
	// written under the key with "_" appended (seq_, run_), so that each
	// key stays unique with the numbers in front.
	SequenceKeys bool
}

// config is the part of an Encoder shared by all encoders derived from it.
type config struct {
	format     Format
	json       bool
	addSource  bool
	rep        func([]string, slog.Attr) slog.Attr
	slogLevels bool
	color      bool
	loggerKey  string
	unique     bool    // Options.UniqueKeys
	seqKeys    bool    // Options.SequenceKeys with UniqueKeys (reserved.go)
	preset     *preset // a cloud preset's keys (format is then JSON), or nil
	root       *Encoder
	// levelTok holds the pre-encoded level field (key and value) of every
	// level in [levelTabMin, levelTabMax], for the fast path.
	levelTok [levelTabMax - levelTabMin + 1]string
}

// Encoder is immutable after construction and safe for concurrent use.
type Encoder struct {
	c *config
	// pre holds the pre-encoded WithAttrs/WithGroup state, exactly like
	// slog's commonHandler.preformattedAttrs: groups opened in it are left
	// open and closed after the record's attrs.
	pre []byte
	// groupPrefix is the dotted key prefix of the groups opened in pre
	// (text-like formats only).
	groupPrefix string
	// groups are all groups started with WithGroup; the first nOpenGroups
	// of them are open in pre.
	groups      []string
	nOpenGroups int
	// named is the pre-encoded logger-name field, without separator.
	named []byte
	// fast selects the specialised Append (see fast.go).
	fast fastPath
	// inner is the path fastUnique encodes with before it makes the keys
	// unique (uniquekeys.go).
	inner fastPath
	// recGroups pre-encodes the groups a record's attrs are written in:
	// for JSON the groups not yet open in pre ("a":{"b":{), for the
	// text-like formats the whole dotted key prefix.
	recGroups string
	// recPrefixPlain reports that recGroups needs no quoting (Text).
	recPrefixPlain bool
	// uniq holds the keys of the fixed part of the line for
	// Options.UniqueKeys on the JSON fast paths, or nil (uniquekeys_fast.go).
	uniq *uniqueTemplate
}

// New returns an Encoder for opts.
func New(opts Options) *Encoder {
	format, p := opts.Format, presetOf(opts.Format)
	if p != nil {
		format = JSON // a preset is JSON with other built-in keys (preset.go)
	}
	if opts.LoggerKey == "" {
		opts.LoggerKey = "logger"
		if p != nil {
			opts.LoggerKey = p.logger
		}
	}
	c := &config{
		format:     format,
		preset:     p,
		json:       format == JSON,
		addSource:  opts.AddSource,
		rep:        opts.ReplaceAttr,
		slogLevels: opts.SlogLevelNames,
		color:      opts.Color && opts.Format == Console,
		loggerKey:  opts.LoggerKey,
		unique:     opts.UniqueKeys,
		seqKeys:    opts.UniqueKeys && opts.SequenceKeys,
	}
	e := &Encoder{c: c}
	c.root = e
	e.prepareConfig()
	e.prepare()
	return e
}

func (e *Encoder) clone() *Encoder {
	return &Encoder{
		c:           e.c,
		pre:         slices.Clip(e.pre),
		groupPrefix: e.groupPrefix,
		groups:      slices.Clip(e.groups),
		nOpenGroups: e.nOpenGroups,
		named:       e.named,
	}
}

// derived finishes an Encoder built by clone.
func (e *Encoder) derived() *Encoder {
	e.prepare()
	return e
}

// WithAttrs returns an Encoder whose lines also carry attrs, pre-encoded
// once now. As in slog, it returns e itself if there is nothing to add.
func (e *Encoder) WithAttrs(attrs []slog.Attr) *Encoder {
	if e.c.format.isZap() {
		return e.zapWithAttrs(attrs) // zap.go
	}
	if len(attrs) == 0 || countEmptyGroups(attrs) == len(attrs) {
		return e
	}
	e2 := e.clone()
	s := newState(e2, e2.pre, "")
	defer s.free()
	s.addOpenGroups()
	if len(e.groupPrefix) > 0 {
		s.growPrefix()
		s.prefix = append(s.prefix, e.groupPrefix...)
	}
	if len(e2.pre) > 0 {
		s.sep = s.attrSep()
		if e2.c.json && e2.pre[len(e2.pre)-1] == '{' {
			s.sep = ""
		}
	}
	pos := len(s.buf)
	s.openGroups()
	if !s.appendAttrs(attrs, 0) {
		s.buf = s.buf[:pos]
	} else {
		e2.groupPrefix = string(s.prefix)
		e2.nOpenGroups = len(e2.groups)
	}
	e2.pre = s.buf
	return e2.derived()
}

func countEmptyGroups(as []slog.Attr) int {
	n := 0
	for _, a := range as {
		if a.Value.Kind() == slog.KindGroup && len(a.Value.Group()) == 0 {
			n++
		}
	}
	return n
}

// WithGroup returns an Encoder that qualifies all later attributes with
// name. As in slog, an empty name returns e.
func (e *Encoder) WithGroup(name string) *Encoder {
	if name == "" {
		return e
	}
	e2 := e.clone()
	e2.groups = append(e2.groups, name)
	return e2.derived()
}

// Named returns an Encoder that writes the top-level field LoggerKey=name
// right after the message (before the WithAttrs/WithGroup state); it
// replaces any earlier name, and an empty name removes it. ReplaceAttr
// applies to the field (with no groups), once, now.
func (e *Encoder) Named(name string) *Encoder {
	if e.c.format.isZap() {
		return e.zapNamed(name) // zap.go
	}
	e2 := e.clone()
	e2.named = nil
	if name != "" {
		s := newState(e2, nil, "")
		defer s.free()
		if s.appendAttr(slog.String(e.c.loggerKey, name), 0) {
			e2.named = s.buf
		}
	}
	return e2.derived()
}

// Append appends one complete line (terminated by '\n') for r to dst and
// returns it. Like any append it may write into dst's spare capacity; it
// may also leave a few bytes modified there past the end of the returned
// line (scratch of fixed-size stores), so dst's spare capacity must not hold
// data the caller still needs.
//
// extra are top-level attributes supplied per call (for example trace_id and
// span_id from a context): they are written right after the logger name and
// before the pre-encoded WithAttrs/WithGroup state, never inside open
// groups. ReplaceAttr applies to them with groups == nil. extra may be nil.
func (e *Encoder) Append(dst []byte, r slog.Record, extra []slog.Attr) []byte {
	return e.AppendRecord(dst, &r, extra)
}

// AppendRecord is Append for a record passed by pointer: a slog.Record is
// about 300 bytes, and a handler that already holds one (its Handle
// parameter) saves copying it again. AppendRecord only reads *r and keeps
// no reference to it or to its attributes.
func (e *Encoder) AppendRecord(dst []byte, r *slog.Record, extra []slog.Attr) []byte {
	return e.appendVia(e.fast, dst, r, extra)
}

// appendVia is AppendRecord through path p.
func (e *Encoder) appendVia(p fastPath, dst []byte, r *slog.Record, extra []slog.Attr) []byte {
	switch p {
	case fastJSON:
		return e.appendJSON(dst, r, extra, nil)
	case fastText:
		return e.appendText(dst, r, extra)
	case fastLogfmt:
		return e.appendLogfmt(dst, r, extra)
	case fastZap:
		return e.appendZap(dst, r, extra) // zap.go
	case fastPresetJSON:
		return e.appendPresetJSON(dst, r, extra, nil) // preset.go
	case fastUnique:
		return e.appendUnique(dst, r, extra) // uniquekeys.go
	}
	return e.appendGeneral(dst, *r, extra)
}

// appendGeneral is Append's general code: ReplaceAttr, Console, and the
// formats without a fast path.
func (e *Encoder) appendGeneral(dst []byte, r slog.Record, extra []slog.Attr) []byte {
	b, _ := e.appendGeneralAt(dst, r, extra)
	return b
}

// appendGeneralAt is appendGeneral that also returns where the fields
// after the header (the built-ins, or Console's columns) start.
func (e *Encoder) appendGeneralAt(dst []byte, r slog.Record, extra []slog.Attr) ([]byte, int) {
	s := newState(e, dst, "")
	stateGroups := s.groups
	s.groups = nil // as in slog, ReplaceAttr sees nil groups for the built-ins
	if e.c.format == Console {
		s.consoleHeader(r)
	} else {
		s.header(r)
	}
	s.groups = stateGroups // empty: the name and extra are top-level
	at := len(s.buf)
	if len(e.named) > 0 {
		s.buf = append(s.buf, s.sep...)
		s.buf = append(s.buf, e.named...)
		s.sep = s.attrSep()
	}
	if len(extra) > 0 {
		s.appendExtra(extra)
	}
	s.addOpenGroups()
	s.appendNonBuiltIns(r)
	s.buf = append(s.buf, '\n')
	s.free()
	return s.buf, at
}

// DropMessage is the message of the line written by AppendDropMarker.
const DropMessage = "asyncbus: records dropped"

// AppendDropMarker appends one valid line in this encoder's format saying
// that n records were lost at this point: time t, level WARN, message
// DropMessage and the top-level attribute dropped=n. It ignores e's name,
// groups and attributes (ReplaceAttr still applies).
func (e *Encoder) AppendDropMarker(dst []byte, t time.Time, n uint64) []byte {
	r := slog.NewRecord(t, slog.LevelWarn, DropMessage, 0)
	r.AddAttrs(slog.Uint64("dropped", n))
	return e.c.root.Append(dst, r, nil)
}

// The fast path. Without ReplaceAttr (the common case) the JSON, Text and
// Logfmt formats are written by one specialised function each (json.go,
// text.go): the built-in keys and the level are pre-encoded constants, the
// group structure of a derived Encoder is pre-encoded once (see prepare), and
// every scalar attribute is appended straight to a local buffer with its Kind
// computed once, with no per-attribute format switch and no state struct.
// Keys and values go through the same primitives as the general code in
// state.go, so the two paths agree by construction; attributes that need
// resolution or recursion are handed to the general code itself.
// fast_test.go compares both paths with each other and with log/slog.

// fastPath selects the specialised Append implementation of an Encoder.
type fastPath uint8

const (
	fastNone fastPath = iota // ReplaceAttr set, or the Console format
	fastJSON
	fastText
	fastLogfmt
	fastPresetJSON // JSON with a cloud preset's built-in keys (preset.go)
	fastUnique     // Options.UniqueKeys: inner's line with its keys made unique
)

// prepare computes the fast-path state of a freshly built or derived
// Encoder from its groups. It runs once per New/With*/Named, never per record.
func (e *Encoder) prepare() {
	e.preparePath()
	if e.c.unique {
		e.inner, e.fast = e.fast, fastUnique
		e.uniq = nil
		if e.inner == fastJSON || e.inner == fastPresetJSON {
			e.uniq = e.newUniqueTemplate() // uniquekeys_fast.go
		}
	}
}

// preparePath is prepare without Options.UniqueKeys.
func (e *Encoder) preparePath() {
	c := e.c
	e.fast = fastNone
	if c.format.isZap() {
		e.prepareZap() // zap.go
		return
	}
	if c.rep != nil {
		return
	}
	var p []byte
	switch c.format {
	case JSON:
		e.fast = fastJSON
		if c.preset != nil {
			e.fast = fastPresetJSON
		}
		for _, n := range e.groups[e.nOpenGroups:] {
			p = append(p, '"')
			p = appendEscapedJSON(p, n)
			p = append(p, '"', ':', '{')
		}
	case Text:
		e.fast = fastText
		p = append(p, e.groupPrefix...)
		for _, n := range e.groups[e.nOpenGroups:] {
			p = append(p, n...)
			p = append(p, '.')
		}
	case Logfmt:
		e.fast = fastLogfmt
		p = append(p, e.groupPrefix...) // sanitized by openGroupLen
		for _, n := range e.groups[e.nOpenGroups:] {
			p = appendLogfmtKey(p, n)
			p = append(p, '.')
		}
	default:
		return
	}
	e.recGroups = string(p)
	e.recPrefixPlain = len(p) == 0 || !needsQuoting(e.recGroups)
}
