package benchmarks

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/asyncbus/asyncbus/filesink"
)

// File sink throughput: batches of 256 records of 200 bytes (what the bus
// hands over), written by filesink.File (one writev per batch), by
// lumberjack (one Write per record, which is all its io.Writer API allows)
// and by a plain *os.File (one Write per record). Rotation never triggers
// (MaxSize huge) so only the per-write checks are measured.

const (
	fsRecord = 200
	fsBatch  = 256
	fsReset  = 2048 // truncate every this many batches so the disk does not fill
)

func fsRecords() [][]byte {
	recs := make([][]byte, fsBatch)
	for i := range recs {
		r := fmt.Appendf(nil, "record-%06d ", i)
		for len(r) < fsRecord-1 {
			r = append(r, 'x')
		}
		recs[i] = append(r, '\n')
	}
	return recs
}

func BenchmarkFileSink(b *testing.B) {
	recs := fsRecords()
	b.Run("filesink/WriteBatch", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "a.log")
		f, err := filesink.Open(path, filesink.Options{MaxSize: 1 << 62})
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		run(b, path, func() error { _, err := f.WriteBatch(recs); return err })
	})
	b.Run("lumberjack/WritePerRecord", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "a.log")
		l := &lumberjack.Logger{Filename: path, MaxSize: 1 << 30}
		defer l.Close()
		run(b, path, func() error {
			for _, r := range recs {
				if _, err := l.Write(r); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("osfile/WritePerRecord", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "a.log")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		run(b, path, func() error {
			for _, r := range recs {
				if _, err := f.Write(r); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func run(b *testing.B, path string, batch func() error) {
	b.SetBytes(fsBatch * fsRecord)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%fsReset == fsReset-1 {
			b.StopTimer()
			if err := os.Truncate(path, 0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := batch(); err != nil {
			b.Fatal(err)
		}
	}
}
