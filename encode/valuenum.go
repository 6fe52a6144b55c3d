package encode

// Reading a scalar slog.Value's number without a second Kind switch.
//
// slog.Value's checked accessors (Int64, Uint64, Bool, Duration, Float64)
// each repeat the Kind type switch the fast paths have already done and
// cannot be inlined; for the reference record that is five calls and five
// type switches per line. For these kinds slog keeps the value in the
// Value's first word (slog's value.go: `num uint64` after a zero-size
// field), so valueNum reads it directly through valueLayout.
//
// That layout is slog's private business, so it is checked once at start-up
// against the public accessors with distinctive bit patterns (valueNumOK);
// if a Go release changes it, the check fails and every caller uses the
// accessors instead. unsafe here reads 8 bytes inside a Value the caller
// holds, of a kind whose first word is a plain number: nothing beyond the
// Value's own memory, and no pointer is made from the number.

import (
	"log/slog"
	"math"
	"time"
	"unsafe"
)

// valueLayout mirrors slog.Value's fields.
type valueLayout struct {
	_   [0]func()
	num uint64
	any any
}

// valueNumOK reports that valueNum agrees with slog's accessors.
var valueNumOK = func() bool {
	if unsafe.Sizeof(slog.Value{}) != unsafe.Sizeof(valueLayout{}) {
		return false
	}
	for _, n := range []int64{-0x123456789abcdef, 0x7edcba9876543210, 0, -1} {
		v := slog.Int64Value(n)
		if int64(valueNumUnchecked(&v)) != n {
			return false
		}
		d := slog.DurationValue(time.Duration(n))
		if int64(valueNumUnchecked(&d)) != n {
			return false
		}
	}
	u := slog.Uint64Value(math.MaxUint64 - 0x5a5a)
	f := slog.Float64Value(-1.2345e-300)
	t, fa := slog.BoolValue(true), slog.BoolValue(false)
	return valueNumUnchecked(&u) == math.MaxUint64-0x5a5a &&
		math.Float64frombits(valueNumUnchecked(&f)) == -1.2345e-300 &&
		valueNumUnchecked(&t) == 1 && valueNumUnchecked(&fa) == 0
}()

func valueNumUnchecked(v *slog.Value) uint64 { return (*valueLayout)(unsafe.Pointer(v)).num }

// valueInt64 returns v.Int64() for a Value of KindInt64 or KindDuration
// (v.Duration() as an int64 for the latter). It is small enough to be
// inlined; the accessors are in valueInt64Slow.
func valueInt64(v *slog.Value, k slog.Kind) int64 {
	if valueNumOK {
		return int64(valueNumUnchecked(v))
	}
	return valueInt64Slow(v, k)
}

// valueInt64Slow is valueInt64 through slog's accessors.
func valueInt64Slow(v *slog.Value, k slog.Kind) int64 {
	if k == slog.KindDuration {
		return int64(v.Duration())
	}
	return v.Int64()
}

// valueBool returns v.Bool() for a Value of KindBool.
func valueBool(v *slog.Value) bool {
	if valueNumOK {
		return valueNumUnchecked(v) == 1
	}
	return v.Bool()
}
