package filesink

import (
	"os"
	"path/filepath"
	"testing"
)

const (
	benchRecord = 200
	benchBatch  = 256
	// benchReset truncates the file every this many batches (timer stopped)
	// so a long run does not fill the disk.
	benchReset = 2048
)

func benchRecords() [][]byte {
	recs := make([][]byte, benchBatch)
	for i := range recs {
		recs[i] = rec("bench", i, benchRecord)
	}
	return recs
}

// BenchmarkWriteBatch measures WriteBatch of 256 records of 200 bytes, with
// rotation disabled and enabled (MaxSize large enough never to rotate, and
// daily rotation): the difference is the cost of the rotation checks.
func BenchmarkWriteBatch(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"rotation=off", Options{}},
		{"rotation=on", Options{MaxSize: 1 << 62, Rotate: RotateDaily, MaxBackups: 10}},
		{"rotation=on,prealloc=4MiB", Options{MaxSize: 1 << 62, Rotate: RotateDaily, MaxBackups: 10, Preallocate: 4 << 20}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.log")
			f, err := Open(path, bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			recs := benchRecords()
			b.SetBytes(benchBatch * benchRecord)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%benchReset == benchReset-1 {
					b.StopTimer()
					f.mu.Lock()
					if err := truncateFD(f.fd, 0); err != nil {
						b.Fatal(err)
					}
					f.size, f.allocEnd = 0, 0
					f.mu.Unlock()
					b.StartTimer()
				}
				if _, err := f.WriteBatch(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkOSFilePerRecord is the usual baseline: a plain *os.File opened
// for appending, one Write per record (same bytes per op as WriteBatch).
func BenchmarkOSFilePerRecord(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	recs := benchRecords()
	b.SetBytes(benchBatch * benchRecord)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchReset == benchReset-1 {
			b.StopTimer()
			if err := f.Truncate(0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		for _, r := range recs {
			if _, err := f.Write(r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteBatchChecks isolates the per-batch bookkeeping (clock read,
// path-check deadline, size and period comparisons, record accounting) from
// the disk: the writev is replaced by one that accepts everything. The
// on/off difference bounds the cost of the rotation checks from above.
func BenchmarkWriteBatchChecks(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts Options
	}{
		{"rotation=off", Options{}},
		{"rotation=on", Options{MaxSize: 1 << 62, Rotate: RotateDaily}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.log")
			f, err := open(path, bc.opts, func(f *File) {
				f.writev = func(_ handle, bufs [][]byte) (int, error) {
					n := 0
					for _, p := range bufs {
						n += len(p)
					}
					return n, nil
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			recs := benchRecords()
			b.SetBytes(benchBatch * benchRecord)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.WriteBatch(recs); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
