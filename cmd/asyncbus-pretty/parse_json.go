package main

import (
	"log/slog"
	"strconv"
	"unicode/utf8"
)

// maxJSONDepth is how deep objects become nested attribute groups; deeper
// values are shown as their JSON text.
const maxJSONDepth = 32

// parseJSON parses a line holding one JSON object (slog JSON, asyncbus
// JSON, ZapJSON and cloud presets, zap, zerolog, logrus, phuslu/log, logr
// funcr, klog JSON, pino, bunyan): its top-level
// fields go through field, nested objects become groups and arrays their
// JSON text. It reports false for anything that is not exactly one valid
// object (trailing spaces allowed).
func (p *parser) parseJSON(r *record, s string) bool {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipSpace(s, i+1) == len(s)
	}
	for first := true; ; first = false {
		key, j, ok := jsonString(s, i)
		if !ok {
			return false
		}
		if j = skipSpace(s, j); j >= len(s) || s[j] != ':' {
			return false
		}
		j = skipSpace(s, j+1)
		if j >= len(s) {
			return false
		}
		r.zapDev = r.zapDev || first && key == "L"
		switch s[j] {
		case '{':
			a, end, ok := p.jsonObject(key, s, j, 1)
			if !ok {
				return false
			}
			if src, ok := jsonSource(a); ok && isSourceKey(key) && r.source.File == "" {
				r.source = src
			} else {
				r.attrs = append(r.attrs, a)
			}
			j = end
		case '[':
			end, ok := skipJSON(s, j)
			if !ok {
				return false
			}
			r.attrs = append(r.attrs, slog.String(key, s[j:end]))
			j = end
		default:
			v, end, ok := jsonScalar(s, j)
			if !ok {
				return false
			}
			p.field(r, key, v)
			j = end
		}
		if j = skipSpace(s, j); j >= len(s) {
			return false
		}
		switch s[j] {
		case ',':
			i = skipSpace(s, j+1)
		case '}':
			return skipSpace(s, j+1) == len(s)
		default:
			return false
		}
	}
}

// jsonObject parses the object at s[i] into a group attribute keyed key,
// or, beyond maxJSONDepth or when empty, a string attribute holding its
// JSON text; it returns the index after the object.
func (p *parser) jsonObject(key, s string, i, depth int) (slog.Attr, int, bool) {
	if depth > maxJSONDepth {
		end, ok := skipJSON(s, i)
		if !ok {
			return slog.Attr{}, 0, false
		}
		return slog.String(key, s[i:end]), end, true
	}
	start := i
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return slog.String(key, s[start:i+1]), i + 1, true
	}
	var attrs []slog.Attr
	for {
		k, j, ok := jsonString(s, i)
		if !ok {
			return slog.Attr{}, 0, false
		}
		if j = skipSpace(s, j); j >= len(s) || s[j] != ':' {
			return slog.Attr{}, 0, false
		}
		if j = skipSpace(s, j+1); j >= len(s) {
			return slog.Attr{}, 0, false
		}
		var a slog.Attr
		switch s[j] {
		case '{':
			a, j, ok = p.jsonObject(k, s, j, depth+1)
		case '[':
			var end int
			if end, ok = skipJSON(s, j); ok {
				a, j = slog.String(k, s[j:end]), end
			}
		default:
			var v scalar
			v, j, ok = jsonScalar(s, j)
			a = slog.String(k, v.text)
		}
		if !ok {
			return slog.Attr{}, 0, false
		}
		attrs = append(attrs, a)
		if j = skipSpace(s, j); j >= len(s) {
			return slog.Attr{}, 0, false
		}
		switch s[j] {
		case ',':
			i = skipSpace(s, j+1)
		case '}':
			return slog.Attr{Key: key, Value: slog.GroupValue(attrs...)}, j + 1, true
		default:
			return slog.Attr{}, 0, false
		}
	}
}

// isSourceKey reports whether key holds a source object: slog's
// "source", "caller", Google Cloud's sourceLocation, ECS's nested
// "log.origin".
func isSourceKey(key string) bool {
	switch key {
	case "source", "caller", "logging.googleapis.com/sourceLocation", "log.origin":
		return true
	}
	return false
}

// jsonSource reads a source object: slog's {"function":..,"file":..,
// "line":N}, Google Cloud's (the line a string) or ECS's ("file.name",
// "file.line", "function").
func jsonSource(a slog.Attr) (slog.Source, bool) {
	if a.Value.Kind() != slog.KindGroup {
		return slog.Source{}, false
	}
	var src slog.Source
	hasLine := false
	for _, f := range a.Value.Group() {
		var err error
		switch f.Key {
		case "function":
			src.Function = f.Value.String()
		case "file", "file.name":
			src.File = f.Value.String()
		case "line", "file.line":
			src.Line, err = strconv.Atoi(f.Value.String())
			hasLine = err == nil
		default:
			return slog.Source{}, false
		}
		if err != nil {
			return slog.Source{}, false
		}
	}
	return src, src.File != "" && hasLine
}

// jsonScalar reads the string, number, true, false or null at s[i].
func jsonScalar(s string, i int) (scalar, int, bool) {
	if s[i] == '"' {
		str, end, ok := jsonString(s, i)
		return scalar{text: str, quoted: true}, end, ok
	}
	j := i
	for j < len(s) && isJSONTokenByte(s[j]) {
		j++
	}
	tok := s[i:j]
	switch {
	case tok == "true", tok == "false", tok == "null":
	case isJSONNumber(tok):
	default:
		return scalar{}, 0, false
	}
	return scalar{text: tok}, j, true
}

func isJSONTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// isJSONNumber reports whether tok is a number in JSON's grammar.
func isJSONNumber(tok string) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(tok) && tok[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(tok)
}

// jsonString reads the JSON string at s[i], returning its decoded value
// (escapes resolved, a lone surrogate as U+FFFD) and the index after it. A
// string without escapes is returned as a substring of s, without copying.
func jsonString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	i++
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '"':
			return s[i:j], j + 1, true
		case '\\':
			return jsonStringEscaped(s, i, j)
		}
	}
	return "", 0, false
}

// jsonStringEscaped decodes a string starting at s[start] whose first
// escape is at s[j].
func jsonStringEscaped(s string, start, j int) (string, int, bool) {
	b := make([]byte, 0, j-start+16)
	b = append(b, s[start:j]...)
	for j < len(s) {
		c := s[j]
		switch {
		case c == '"':
			return string(b), j + 1, true
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(s) {
			return "", 0, false
		}
		e := s[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n, ok := unicodeEscape(s, j-2)
			if !ok {
				return "", 0, false
			}
			j += n - 2
			b = utf8.AppendRune(b, r)
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// hex4 reads four hex digits at s[i].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipJSON returns the index after the JSON value at s[i], checking its
// syntax without recursion (any depth).
func skipJSON(s string, i int) (int, bool) {
	var stack []byte // the closing brackets due
	expectKey := false
	for {
		if i = skipSpace(s, i); i >= len(s) {
			return 0, false
		}
		switch c := s[i]; {
		case expectKey:
			_, end, ok := jsonString(s, i)
			if !ok {
				return 0, false
			}
			if i = skipSpace(s, end); i >= len(s) || s[i] != ':' {
				return 0, false
			}
			i++
			expectKey = false
			continue
		case c == '{':
			if j := skipSpace(s, i+1); j < len(s) && s[j] == '}' {
				i = j + 1
				break
			}
			stack = append(stack, '}')
			expectKey = true
			i++
			continue
		case c == '[':
			if j := skipSpace(s, i+1); j < len(s) && s[j] == ']' {
				i = j + 1
				break
			}
			stack = append(stack, ']')
			i++
			continue
		default:
			_, end, ok := jsonScalar(s, i)
			if !ok {
				return 0, false
			}
			i = end
		}
		// After a value: close brackets or move to the next element.
		for {
			if len(stack) == 0 {
				return i, true
			}
			if i = skipSpace(s, i); i >= len(s) {
				return 0, false
			}
			top := stack[len(stack)-1]
			if s[i] == top {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if s[i] != ',' {
				return 0, false
			}
			i++
			expectKey = top == '}'
			break
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}
