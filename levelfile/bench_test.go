package levelfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncbus/asyncbus"
)

// BenchmarkPoll is the cost of one poll that finds nothing new, which is
// what nearly every poll is: one stat through the ConfigMap's two
// symbolic links, or of a plain file; "stat" is os.Stat alone, the floor.
func BenchmarkPoll(b *testing.B) {
	for _, layout := range []string{"configmap", "plain"} {
		b.Run(layout, func(b *testing.B) {
			var path string
			if layout == "configmap" {
				cm := &configMap{dir: b.TempDir()}
				cm.updateB(b, "levels", "info,db=debug\n")
				if err := os.Symlink(filepath.Join("..data", "levels"), filepath.Join(cm.dir, "levels")); err != nil {
					b.Fatal(err)
				}
				path = cm.path("levels")
			} else {
				path = filepath.Join(b.TempDir(), "levels")
				if err := os.WriteFile(path, []byte("info,db=debug\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			rules := asyncbus.MustParseLevelRules("")
			w, err := Watch(rules, path, &Options{Interval: time.Hour, OnError: func(err error) { b.Fatal(err) }})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.ReportAllocs()
			b.Run("poll", func(b *testing.B) {
				for b.Loop() {
					w.poll()
				}
			})
			b.Run("stat", func(b *testing.B) { // the floor: os.Stat alone
				for b.Loop() {
					if _, err := os.Stat(path); err != nil {
						b.Fatal(err)
					}
				}
			})
			if rules.String() != "info,db=debug" {
				b.Fatal(rules.String())
			}
		})
	}
}

// updateB is configMap.update for a benchmark.
func (cm *configMap) updateB(b *testing.B, key, content string) {
	cm.n++
	ts := "..2026_12_02_11_00_00.000000001"
	for _, err := range []error{
		os.Mkdir(filepath.Join(cm.dir, ts), 0o755),
		os.WriteFile(filepath.Join(cm.dir, ts, key), []byte(content), 0o644),
		os.Symlink(ts, filepath.Join(cm.dir, "..data")),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	cm.current = ts
}
