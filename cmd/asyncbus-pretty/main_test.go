package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of main.go: the command's flags, inputs, colour rules and exit
// statuses, through run.

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

const sample = `{"time":"2026-12-01T12:34:56.789Z","level":"INFO","msg":"started","port":8080}
panic: something
{"time":"2026-12-01T12:34:56.790Z","level":"ERROR","msg":"failed","err":"boom"}`

func TestRunStdin(t *testing.T) {
	code, out, errOut := runCmd(t, sample)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "12:34:56.789 INFO  started port=8080\npanic: something\n12:34:56.790 ERROR failed err=boom\n", out)
}

func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	require.NoError(t, os.WriteFile(a, []byte("level=warn msg=a\n"), 0o644))
	code, out, errOut := runCmd(t, "level=info msg=stdin", a, "-", filepath.Join(dir, "missing.log"), a)
	assert.Equal(t, 1, code, "a missing file fails the run")
	assert.Contains(t, errOut, "missing.log")
	assert.Equal(t, "WARN  a\nINFO  stdin\nWARN  a\n", out, "the other files are still printed, in order")
}

func TestRunFilters(t *testing.T) {
	code, out, _ := runCmd(t, sample, "-level", "error")
	assert.Equal(t, 0, code)
	assert.Equal(t, "panic: something\n12:34:56.790 ERROR failed err=boom\n", out)
	_, out, _ = runCmd(t, sample, "-match", "port=8080")
	assert.Equal(t, "12:34:56.789 INFO  started port=8080\n", out)
}

func TestRunUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-level", "loud"},
		{"-match", "novalue"},
		{"-color", "sometimes"},
		{"-f"},
		{"-f", "a", "b"},
		{"-f", "-"},
		{"-poll", "0s", "x"},
		{"-nosuchflag"},
	} {
		code, _, errOut := runCmd(t, "", args...)
		assert.Equal(t, 2, code, "%q", args)
		assert.NotEmpty(t, errOut, "%q", args)
	}
	code, _, errOut := runCmd(t, "", "-help")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "-match key=value")
}

// TestRunColour: -color and the environment; a buffer is no terminal.
func TestRunColour(t *testing.T) {
	const line = `{"level":"INFO","msg":"m"}`
	for _, tc := range []struct {
		name  string
		env   map[string]string
		flag  string
		color bool
	}{
		{"auto, not a terminal", nil, "auto", false},
		{"auto, FORCE_COLOR", map[string]string{"FORCE_COLOR": "1"}, "auto", true},
		{"auto, CLICOLOR_FORCE", map[string]string{"CLICOLOR_FORCE": "1"}, "auto", true},
		{"auto, NO_COLOR beats FORCE_COLOR", map[string]string{"NO_COLOR": "1", "FORCE_COLOR": "1"}, "auto", false},
		{"auto, TERM=dumb", map[string]string{"TERM": "dumb", "FORCE_COLOR": "1"}, "auto", false},
		{"always, NO_COLOR", map[string]string{"NO_COLOR": "1"}, "always", true},
		{"never, FORCE_COLOR", map[string]string{"FORCE_COLOR": "1"}, "never", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TERM"} {
				t.Setenv(k, tc.env[k])
			}
			_, out, _ := runCmd(t, line, "-color", tc.flag)
			assert.Equal(t, tc.color, strings.Contains(out, "\x1b["), "%q", out)
		})
	}
}
