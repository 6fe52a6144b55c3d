package bus

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is a transparent huge page on linux/amd64 and linux/arm64 (4 KiB pages).
const hugePage = 2 << 20

// mapping is ring memory outside the Go heap: an anonymous private
// mapping, the ring aligned to a huge page inside it.
type mapping struct {
	all  []byte // the whole mapping, for munmap
	ring []byte // capacity bytes of it, aligned to hugePage
}

// mapRing maps the ring's memory, advised onto transparent huge pages
// (docs/design.md, On huge pages). It returns nil (the caller takes heap
// memory) for a ring smaller than a huge page, on 32-bit platforms (whose
// address space a closed handler's mapping would weigh on until the Bus
// is collected), and when the mapping fails; without THP the ring has
// 4 KiB pages, as on the heap.
func mapRing(capacity uint64) *mapping {
	if capacity < hugePage || unsafe.Sizeof(uintptr(0)) < 8 {
		return nil
	}
	all, err := unix.Mmap(-1, 0, int(capacity+hugePage), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	// unsafe: the address only, to align the ring inside the mapping.
	skip := (hugePage - uint64(uintptr(unsafe.Pointer(&all[0])))%hugePage) % hugePage
	m := &mapping{all: all, ring: all[skip : skip+capacity : skip+capacity]}
	_ = unix.Madvise(m.ring, unix.MADV_HUGEPAGE) // a hint: an error leaves 4 KiB pages
	return m
}

// release gives the ring's pages back to the kernel once the drainer is
// done with them; the mapping stays, so a late reader (a wait's look at
// the header word at head) reads zeros, which no entry has, instead of
// faulting.
func (m *mapping) release() { _ = unix.Madvise(m.ring, unix.MADV_DONTNEED) }

// unmap removes the mapping: the Bus's cleanup, run once nothing can
// reach the Bus, and so nothing can read its ring.
func (m *mapping) unmap() { _ = unix.Munmap(m.all) }
