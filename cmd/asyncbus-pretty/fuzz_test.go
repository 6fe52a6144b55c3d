package main

import (
	"bytes"
	"testing"
)

// FuzzPretty checks the printer's promises on any input: it never panics,
// every input line gives exactly one output line (no filter is set), and a
// line it does not recognise comes out byte for byte. The seed corpus is
// in testdata/fuzz/FuzzPretty.
func FuzzPretty(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-01T12:34:56.789Z","level":"INFO","msg":"m","k":[1,{"a":"\ud800"}]}`), false)
	f.Add([]byte("time=2026-12-01T12:34:56.789Z level=INFO msg=\"a\\x00b\" g.k=1\nnot a log line\n"), true)
	f.Add([]byte("I1201 12:34:56.789000    4242 main.go:9] \"m\" k=\"v\"\n\xff\xfe\n"), false)
	f.Add([]byte(`{"level":"WARN","msg":"asyncbus: records dropped","dropped":3}`), true)
	f.Add([]byte("12:34:56.789 INFO  app/main.go:12 \"a\\tb\" k=\"v w\" g.n=1\n\x1b[2m12:34:56.789\x1b[0m \x1b[33mWARN\x1b[0m  m"), false)
	f.Add([]byte("2026-12-01T12:34:56.789Z\tDPANIC\tapi\tapp/main.go:12\tm\t{\"k\": [1, {\"a\": null}]}\n\t/src/app/main.go:42\n"), true)
	f.Add([]byte("\x1b[0m\n\x1b[1m\t\x1b[0m\n"), true)
	f.Add([]byte(`{"L":"INFO","M":"m"}`+"\n"+`{"level":30,"status":"warn","log.origin":{"file.name":"a.go","file.line":"1"}}`), false)
	f.Fuzz(func(t *testing.T, data []byte, color bool) {
		in := bytes.Split(data, []byte("\n"))
		if len(in[len(in)-1]) == 0 {
			in = in[:len(in)-1] // the input ended with a newline
		}
		p := newPrinter(color, false, filter{})
		check := &parser{}
		var r record
		for _, line := range in {
			out := p.appendLine(nil, line)
			if len(out) == 0 || out[len(out)-1] != '\n' || bytes.IndexByte(out, '\n') != len(out)-1 {
				t.Fatalf("line %q gave %q, not one line", line, out)
			}
			if !check.parse(&r, string(line)) && !bytes.Equal(out[:len(out)-1], line) {
				t.Fatalf("unrecognised line %q came out as %q", line, out)
			}
		}
	})
}
