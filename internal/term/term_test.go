package term

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAuto: the environment rules, in their order.
func TestAuto(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		terminal bool
		want     bool
	}{
		{"terminal", nil, true, true},
		{"not a terminal", nil, false, false},
		{"NO_COLOR on a terminal", map[string]string{"NO_COLOR": "1"}, true, false},
		{"NO_COLOR empty is unset", map[string]string{"NO_COLOR": ""}, true, true},
		{"NO_COLOR beats FORCE_COLOR", map[string]string{"NO_COLOR": "1", "FORCE_COLOR": "1"}, false, false},
		{"FORCE_COLOR into a pipe", map[string]string{"FORCE_COLOR": "1"}, false, true},
		{"FORCE_COLOR any value", map[string]string{"FORCE_COLOR": "true"}, false, true},
		{"FORCE_COLOR=0 forces nothing", map[string]string{"FORCE_COLOR": "0"}, false, false},
		{"CLICOLOR_FORCE into a pipe", map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"CLICOLOR_FORCE=0 forces nothing", map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{"CLICOLOR=0 on a terminal", map[string]string{"CLICOLOR": "0"}, true, false},
		{"CLICOLOR=1 leaves it to the terminal", map[string]string{"CLICOLOR": "1"}, false, false},
		{"TERM=dumb", map[string]string{"TERM": "dumb"}, true, false},
		{"TERM=dumb beats CLICOLOR_FORCE", map[string]string{"TERM": "dumb", "CLICOLOR_FORCE": "1"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			asked := false
			got := Auto(getenv, func() bool { asked = true; return tc.terminal })
			assert.Equal(t, tc.want, got)
			if len(tc.env) == 0 {
				assert.True(t, asked, "with nothing set, the terminal decides")
			}
		})
	}
}
