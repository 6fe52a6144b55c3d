package levelfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/levelfile"
)

// Levels from a mounted ConfigMap (here a temporary file), followed live:
// kubectl edit configmap changes the levels of a running operator.
func ExampleWatch() {
	dir, err := os.MkdirTemp("", "levels")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "levels") // in a pod: the volume's mount path and the key
	if err := os.WriteFile(path, []byte("# levels\ninfo\ncontroller=debug\n"), 0o644); err != nil {
		panic(err)
	}

	rules := asyncbus.MustParseLevelRules("info") // in force until the file is read
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules})
	defer h.Close()
	w, err := levelfile.Watch(rules, path, &levelfile.Options{
		OnError: func(err error) { fmt.Println("log levels:", err) }, // a bad edit, naming the line
	})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	fmt.Println(rules)
	// Output:
	// info,controller=debug
}
