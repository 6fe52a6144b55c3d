package httplog

import (
	"crypto/rand"
	"encoding/base32"
	"strconv"
	"sync/atomic"
)

// idPrefix is this process's random request-id prefix: 10 random bytes,
// 16 base32 characters, so that ids differ across processes and boots.
var idPrefix = func() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}()

// idCounter numbers the ids generated in this process. atomic.Uint64 is
// 64-bit aligned on 32-bit platforms too, and Add makes each id distinct
// whatever the number of concurrent requests.
var idCounter atomic.Uint64

// maxIDLen is the longest request id taken from a request header.
const maxIDLen = 128

// requestID returns the request id: h when it is a usable id (1 to
// maxIDLen printable ASCII characters), else a new one.
func requestID(h string) string {
	if validID(h) {
		return h
	}
	return newID()
}

// validID reports whether s is 1 to maxIDLen printable ASCII characters.
func validID(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// newID returns the process's prefix, "-" and the next counter value in
// base 36, in one allocation.
func newID() string {
	var b [len("0123456789abcdef") + 1 + 13]byte // 13: a uint64 in base 36
	n := copy(b[:], idPrefix)
	b[n] = '-'
	return string(strconv.AppendUint(b[:n+1], idCounter.Add(1), 36))
}
