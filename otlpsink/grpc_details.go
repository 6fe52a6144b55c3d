package otlpsink

import (
	"encoding/base64"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// retryInfoType is the type URL suffix of google.rpc.RetryInfo in an Any.
const retryInfoType = "/google.rpc.RetryInfo"

// retryInfoDelay returns the retry_delay of the first google.rpc.RetryInfo
// among the details of the google.rpc.Status in v, a grpc-status-details-bin
// value (base64, padded or not); -1 if there is none or v is malformed. A
// negative delay is 0.
func retryInfoDelay(v string) time.Duration {
	if v == "" {
		return -1
	}
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return -1
	}
	delay := time.Duration(-1)
	eachBytesField(raw, func(num protowire.Number, any []byte) bool { // Status.details (3): Any
		if num != 3 {
			return true
		}
		var typeURL string
		var value []byte
		eachBytesField(any, func(num protowire.Number, b []byte) bool {
			switch num {
			case 1:
				typeURL = string(b)
			case 2:
				value = b
			}
			return true
		})
		if !strings.HasSuffix(typeURL, retryInfoType) {
			return true
		}
		delay = 0
		eachBytesField(value, func(num protowire.Number, b []byte) bool { // RetryInfo.retry_delay (1)
			if num == 1 {
				delay = protoDuration(b)
			}
			return true
		})
		return false
	})
	return delay
}

// protoDuration decodes a google.protobuf.Duration; negative or absurd
// values are 0 (the caller caps long ones).
func protoDuration(b []byte) time.Duration {
	var secs, nanos int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == 1 || num == 2) {
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return 0
			}
			if num == 1 {
				secs = int64(v)
			} else {
				nanos = int64(int32(v)) // int32 on the wire, sign-extended to 64 bits
			}
			b = b[k:]
			continue
		}
		k := protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return 0
		}
		b = b[k:]
	}
	if secs < 0 || nanos < 0 || secs > int64(24*time.Hour/time.Second) {
		return 0
	}
	return time.Duration(secs)*time.Second + time.Duration(nanos)
}

// eachBytesField calls f with each length-delimited field of the message
// b, in order, until f returns false; other fields are skipped, and a
// malformed part ends the walk.
func eachBytesField(b []byte, f func(protowire.Number, []byte) bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 || !f(num, v) {
				return
			}
			b = b[k:]
			continue
		}
		k := protowire.ConsumeFieldValue(num, typ, b)
		if k < 0 {
			return
		}
		b = b[k:]
	}
}
