package journald

import (
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendSequenceFieldsFirst(t *testing.T) {
	enc := newEncoder("app", false, "", nil)
	run := strings.Repeat("ab", 8)
	for _, tc := range []struct {
		name string
		seq  uint64
	}{{"first", 1}, {"largest", math.MaxUint64}} {
		t.Run(tc.name, func(t *testing.T) {
			rec, _ := encodeEntry(t, enc, record(0, "hello"), "")
			rec = append([]byte{recordTag}, rec...)
			head, skip := enc.AppendSequence(nil, rec, tc.seq, run)
			require.Equal(t, 1, skip, "the head replaces the tag")
			assert.LessOrEqual(t, len(head)-skip, seqRoom)
			line := append(head, rec[skip:]...)
			require.Equal(t, byte(recordTag), line[0])
			fs, err := parseEntry(line[1:])
			require.NoError(t, err)
			assert.Equal(t, []field{
				{Name: "ASYNCBUS_SEQ", Value: strconv.FormatUint(tc.seq, 10)},
				{Name: "ASYNCBUS_RUN", Value: run},
				{Name: "PRIORITY", Value: "6"},
				{Name: "MESSAGE", Value: "hello"},
				{Name: "SYSLOG_IDENTIFIER", Value: "app"},
			}, fs)
		})
	}
	t.Run("room", func(t *testing.T) {
		head, skip := enc.AppendSequence(nil, []byte{recordTag}, math.MaxUint64, run)
		assert.Equal(t, seqRoom, len(head)-skip, "the largest number fills the room exactly")
	})
	t.Run("foreign", func(t *testing.T) {
		head, skip := enc.AppendSequence(nil, []byte(`{"msg":"asyncbus: records dropped"}`+"\n"), 1, run)
		assert.Nil(t, head)
		assert.Zero(t, skip)
	})
}

func TestAppendDropMarkerCarriesTheCount(t *testing.T) {
	replaced := false
	enc := newEncoder("app", false, "", func(_ []string, a slog.Attr) slog.Attr { replaced = true; return a })
	m := enc.AppendDropMarker(nil, time.Now(), 42)
	require.Equal(t, byte(recordTag), m[0])
	fs, err := parseEntry(m[1:])
	require.NoError(t, err)
	assert.Equal(t, []field{
		{Name: "PRIORITY", Value: "4"},
		{Name: "MESSAGE", Value: "asyncbus: records dropped"},
		{Name: "SYSLOG_IDENTIFIER", Value: "app"},
		{Name: "ASYNCBUS_DROPPED", Value: "42"},
	}, fs)
	assert.False(t, replaced, "ReplaceAttr does not see the marker's count")
}

// seqRoom is the handler's room in front of every record (see asyncbus.Encoder).
const seqRoom = 64
