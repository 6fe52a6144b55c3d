package logrbridge

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

func TestKlogRules(t *testing.T) {
	for _, tc := range []struct{ v, vmodule, want, err string }{
		{"", "", "0", ""},
		{"0", "", "0", ""},
		{"4", "", "-4", ""},
		{"2", "controller=4", "-2,controller=-4", ""},
		{"", " controller.pod=6 , webhook=0,", "0,controller.pod=-6,webhook=0", ""},
		{"-1", "", "1", ""}, // klog takes a negative -v: even V(0) is hidden
		{"x", "", "", `-v "x": want an integer`},
		{"99999999999", "", "", `-v "99999999999": want an integer`},
		{"", "controller*=4", "", `"controller*" is a glob`},
		{"", "pkg/?=4", "", "is a glob"},
		{"", "controller", "", `"controller" is not name=N`},
		{"", "=3", "", `"=3" is not name=N`},
		{"", "db=debug", "", `"db=debug": want an integer verbosity`},
	} {
		got, err := KlogRules(tc.v, tc.vmodule)
		if tc.err != "" {
			require.Error(t, err, "%q %q", tc.v, tc.vmodule)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%q %q", tc.v, tc.vmodule)
		_, err = asyncbus.ParseLevelRules(got)
		assert.NoError(t, err, "valid rules")
	}
}

// TestBindKlogFlags: -v and --vmodule, parsed as a controller-runtime
// component's command line gives them, set which V levels of which logr
// loggers write, on loggers that already exist.
func TestBindKlogFlags(t *testing.T) {
	rules := asyncbus.MustParseLevelRules("info")
	h := asyncbus.NewHandler(io.Discard, &asyncbus.Options{Rules: rules})
	defer h.Close()
	log := NewLogger(h)
	reconciler := log.WithName("controller").WithName("pod")
	webhook := log.WithName("webhook")

	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	BindKlogFlags(fs, rules)
	require.NoError(t, fs.Parse([]string{"-v", "2", "--vmodule=controller=5,webhook=0"}))
	assert.Equal(t, "debug+2,controller=debug-1,webhook=info", rules.String())
	assert.True(t, log.V(2).Enabled())
	assert.False(t, log.V(3).Enabled())
	assert.True(t, reconciler.V(5).Enabled(), "a descendant of controller")
	assert.False(t, reconciler.V(6).Enabled())
	assert.True(t, webhook.Enabled())
	assert.False(t, webhook.V(1).Enabled())
	assert.Equal(t, "2", fs.Lookup("v").Value.String())
	assert.Equal(t, "controller=5,webhook=0", fs.Lookup("vmodule").Value.String())
}

// TestBindKlogFlagsBadValue: a bad value fails the parse, naming the
// flag, and the rules stay as they were.
func TestBindKlogFlagsBadValue(t *testing.T) {
	rules := asyncbus.MustParseLevelRules("warn")
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	BindKlogFlags(fs, rules)
	err := fs.Parse([]string{"-vmodule", "reconcile*=4"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid value "reconcile*=4" for flag -vmodule`)
	assert.Contains(t, err.Error(), "is a glob")
	assert.Equal(t, "warn", rules.String())
	assert.Equal(t, "", fs.Lookup("vmodule").Value.String())

	err = fs.Parse([]string{"-vmodule", "bad name=4"})
	require.Error(t, err, "a name the rules refuse")
	assert.Contains(t, err.Error(), `logger name "bad name"`)
	assert.Equal(t, "warn", rules.String())
}
