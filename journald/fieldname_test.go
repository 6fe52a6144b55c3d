package journald

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendFieldName(t *testing.T) {
	for _, tc := range []struct {
		prefix, key, want string
	}{
		{"", "user", "USER"},
		{"", "User.ID", "USER_ID"},
		{"", "http-status code", "HTTP_STATUS_CODE"},
		{"", "ALREADY_OK_9", "ALREADY_OK_9"},
		{"", "_id", "ID"},
		{"", "__", "ATTR_"},
		{"", "", "ATTR_"},
		{"", "1st", "ATTR_1ST"},
		{"", "_1st", "ATTR_1ST"},
		{"", "café", "CAF_"},       // one '_' per rune
		{"", "日本", "ATTR_"},        // only underscores: removed, then empty
		{"", "a\xff\xfeb", "A__B"}, // one '_' per invalid byte
		{"", "message", "ATTR_MESSAGE"},
		{"", "Priority", "ATTR_PRIORITY"},
		{"", "syslog_identifier", "ATTR_SYSLOG_IDENTIFIER"},
		{"", "code.file", "ATTR_CODE_FILE"},
		{"", "message_id", "MESSAGE_ID"},                  // a journal field of its own, not reserved here
		{"", "asyncbus.dropped", "ATTR_ASYNCBUS_DROPPED"}, // a drop marker's count: no record passes for one
		{"ASYNCBUS_", "dropped", "ATTR_ASYNCBUS_DROPPED"}, // a group's member too
		{"", "asyncbus.seq", "ATTR_ASYNCBUS_SEQ"},
		{"", "ASYNCBUS_RUN", "ATTR_ASYNCBUS_RUN"},
		{"", "asyncbus.dropped_n", "ASYNCBUS_DROPPED_N"},
		{"HTTP_", "status", "HTTP_STATUS"},
		{"HTTP_", "", "HTTP_"},
		{"_G_", "x", "G_X"},
		{"", strings.Repeat("a", 100), strings.Repeat("A", 64)},
		{"", "1" + strings.Repeat("a", 100), "ATTR_1" + strings.Repeat("A", 58)},
	} {
		t.Run(tc.prefix+tc.key, func(t *testing.T) {
			got := string(appendFieldName([]byte("before"), []byte(tc.prefix), tc.key))
			assert.Equal(t, "before"+tc.want, got)
			assert.True(t, validName(tc.want))
		})
	}
}

func TestGroupPrefix(t *testing.T) {
	assert.Equal(t, "HTTP_", string(appendGroupPrefix(nil, "http")))
	assert.Equal(t, "HTTP_REQ_V2_", string(appendGroupPrefix([]byte("HTTP_"), "req.v2")))
	assert.Equal(t, "_X_", string(appendGroupPrefix(nil, "_x"))) // the rules apply to the whole name
}

// FuzzAppendFieldName checks that every key, under any group, maps to a
// name the journal accepts.
func FuzzAppendFieldName(f *testing.F) {
	for _, s := range []string{"", "a", "_", "9", "message", "a.b", "é", "\xff"} {
		f.Add("", s)
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, group, key string) {
		var prefix []byte
		if group != "" {
			prefix = appendGroupPrefix(nil, group)
		}
		name := string(appendFieldName(nil, prefix, key))
		if !validName(name) || isReserved([]byte(name)) {
			t.Fatalf("group %q key %q: invalid name %q", group, key, name)
		}
	})
}
