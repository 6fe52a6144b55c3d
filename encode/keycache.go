package encode

// Keys repeat, so the JSON fast path caches the encoded form ,"key": of
// short keys that need no escaping (a cache of " key=" for Text and Logfmt
// was tried and saved nothing there, so it is not used). A cache is a fixed
// array of slots, each an atomic.Pointer to an immutable keyEntry; the slot
// is chosen by a hash of the key's bytes, and a hit is verified against the
// key's bytes (never its address, which a later string may reuse), so a key
// can only ever be written as its own encoding. A slot is filled once, by
// the first key that lands in it, and never replaced: a cache costs at most
// keyCacheSlots small allocations in the life of the process and none per
// record, and a key that collides with an earlier one is simply encoded
// directly every time.

import "sync/atomic"

const (
	keyCacheMax   = 16 // longest key cached, in bytes
	keyCacheBits  = 8
	keyCacheSlots = 1 << keyCacheBits
)

// keyCache is one format's key cache.
type keyCache [keyCacheSlots]atomic.Pointer[keyEntry]

var jsonKeys keyCache

// keyEntry is one cached key: its bytes, as the two words keyWords loads
// from it (with the length, they determine every byte), and its encoding.
type keyEntry struct {
	lo, hi uint64
	n      uint8 // len(key)
	elen   uint8 // len of the encoding
	enc    [keyCacheMax + 4]byte
}

// keyWords returns two words that with len(key), 1 to keyCacheMax, determine
// every byte of key: its first and last 8 bytes (overlapping), its first and
// last 4, or for fewer than 4 bytes its first, middle and last byte.
func keyWords(key string) (lo, hi uint64) {
	n := len(key)
	switch {
	case n >= 8:
		return load64(key, 0), load64(key, n-8)
	case n >= 4:
		return load32(key, 0), load32(key, n-4)
	default:
		return uint64(key[0]) | uint64(key[n>>1])<<8 | uint64(key[n-1])<<16, 0
	}
}

// keySlot hashes the words keyWords loads from a key to a slot.
func keySlot(lo, hi uint64) uint64 {
	return ((lo ^ hi*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd) >> (64 - keyCacheBits)
}

// publishKey fills slot with key's encoding enc (at most keyCacheMax+4
// bytes) if the slot is still empty. The caller has checked that key needs
// no escaping in its format.
func publishKey(slot *atomic.Pointer[keyEntry], key string, enc []byte) {
	e := &keyEntry{n: uint8(len(key)), elen: uint8(len(enc))}
	e.lo, e.hi = keyWords(key)
	copy(e.enc[:], enc)
	// CompareAndSwap from nil: only the first key to reach an empty slot
	// publishes, after e is complete (the CAS orders e's writes before any
	// Load that sees it); a loser drops its entry and changes nothing.
	slot.CompareAndSwap(nil, e)
}
