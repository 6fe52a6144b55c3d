package harness

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogShapeStructs: the structs record is about a kilobyte of JSON
// through slog, carries every attribute StructAttrs names and its seq last,
// and LogAttrs and Info's pairs give the same line.
func TestLogShapeStructs(t *testing.T) {
	var attrs, pairs bytes.Buffer
	noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	LogShape(context.Background(), slog.New(slog.NewJSONHandler(&attrs, noTime)), ShapeStructs, 7)
	p := append(StructPairs(), "seq", 7)
	slog.New(slog.NewJSONHandler(&pairs, noTime)).Info(StructsMessage, p...)
	line := attrs.String()
	assert.InDelta(t, 1100, len(line), 200, line)
	for _, key := range []string{`"user":{"ID":1234567`, `"items":[{`, `"tags":[`, `"counts":[`, `"at":"2024-05-17T10:30:45.123456789Z"`, `"err":"inventory service`} {
		assert.Contains(t, line, key)
	}
	assert.Contains(t, line, `,"seq":7}`+"\n")
	assert.Equal(t, pairs.String(), line)
}

// TestRunStructsShapeIsolated: the shape reaches the child processes (the
// file holds structs records, every seq once) and the Results name it.
func TestRunStructsShapeIsolated(t *testing.T) {
	quickRaceExit(t)
	res, err := Run(context.Background(), Config{
		Contestants: testContestants()[:1], Goroutines: []int{2}, N: 200, Repeat: 1, TempDir: t.TempDir(),
		Isolate: true, ChildArgs: []string{"-test.run=^$"}, Shape: ShapeStructs,
	})
	require.NoError(t, err)
	require.Empty(t, res.Failures)
	require.Len(t, res.Samples, 1)
	s := res.Samples[0]
	assert.True(t, s.Count.Verified())
	assert.Equal(t, int64(200), s.Count.Unique)
	assert.Greater(t, s.FileBytes, int64(200*900), "~1 KB lines, not the 200-byte reference")
	assert.Equal(t, ShapeStructs, res.Shape)
	assert.Contains(t, res.Markdown("slog-json"), "Workload: 200 structs records (~1 KB")
}

// TestShapeValidation: an unknown shape is refused before anything runs.
func TestShapeValidation(t *testing.T) {
	_, err := Run(context.Background(), Config{Contestants: testContestants()[:1], Goroutines: []int{1}, N: 10, Repeat: 1, Shape: "huge"})
	require.ErrorContains(t, err, `unknown record shape "huge"`)
	_, err = Measure(testContestants()[0], Job{Contestant: testContestants()[0].Name, Goroutines: 1, N: 1, SampleEvery: 1, Shape: "huge", TempDir: os.TempDir()})
	require.ErrorContains(t, err, "huge")
}
