// Package plural writes counts with their noun in the right number, for
// error messages: "1 record", "2 records".
package plural

import "strconv"

// integer is every integer type a count may have.
type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Count returns n followed by one (when n is 1) or many (otherwise):
// Count(1, "record", "records") is "1 record".
func Count[T integer](n T, one, many string) string {
	noun := many
	if n == 1 {
		noun = one
	}
	if n < 0 {
		return strconv.FormatInt(int64(n), 10) + " " + noun
	}
	return strconv.FormatUint(uint64(n), 10) + " " + noun
}
