// Command servicebench measures the logging back ends as a user deploys
// them: a net/http service on loopback, driven by a load generator in
// another process, whose handler does a little JSON work and logs what a
// real service logs per request (an access record at Info with 8
// attributes, one Info from business logic, two disabled Debug calls, an
// Error every 1,000th request), writing to a real file, to a pipe read as
// fast as its reader can, or to a pipe whose reader drains 2 MB/s (a
// container's stdout behind a backed-up log shipper). Back ends alternate
// round by round; the table gives medians of the rounds.
//
//	cd benchmarks && go run ./cmd/servicebench
//
// runs every scenario (a few seconds per scenario and back end). With
// -before BIN (a build of this command against an older asyncbus, see
// before.sh) the asyncbus back ends are run with that build too.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "servicebench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("servicebench", flag.ContinueOnError)
	serveAs := fs.String("serve", "", "internal: run the server with this back end")
	out := fs.String("out", "-", "internal: the server's output file, - for stdout")
	loadAddr := fs.String("load", "", "internal: run the load generator against this address")
	conns := fs.Int("conns", 128, "connections for the file and fast-pipe scenarios")
	slowConns := fs.Int("slowconns", 32, "connections for the slow-pipe scenario")
	dur := fs.Duration("dur", 2*time.Second, "load per run")
	rounds := fs.Int("rounds", 3, "rounds (each back end once per round, alternating)")
	serverCores := fs.Int("cores", 1, "the server's GOMAXPROCS")
	slowRate := fs.Int("slowrate", 2<<20, "the slow pipe reader's bytes per second")
	scenarios := fs.String("scenarios", "file,fastpipe,slowpipe", "scenarios to run")
	backends := fs.String("backends", "asyncbus-block,asyncbus-drop,slog-file,zap-buffered,zerolog,phuslu-async", "back ends")
	before := fs.String("before", "", "a build of this command against an older asyncbus: its asyncbus back ends run too, marked @before")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *serveAs != "":
		cores(*serverCores)
		return serve(*serveAs, *out)
	case *loadAddr != "":
		return generate(*loadAddr, *conns, *dur)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var entries []entry
	for _, name := range strings.Split(*backends, ",") {
		entries = append(entries, entry{name: name, backend: name, bin: self})
		if *before != "" && strings.HasPrefix(name, "asyncbus") {
			entries = append(entries, entry{name: name + "@before", backend: name, bin: *before})
		}
	}
	o := orchestra{self: self, dur: *dur, cores: *serverCores, slowRate: *slowRate}
	fmt.Printf("# servicebench: server GOMAXPROCS=%d, %v per run, %d rounds, %d CPUs, load average %s\n\n",
		*serverCores, *dur, *rounds, numCPU(), loadAverage())
	for _, sc := range strings.Split(*scenarios, ",") {
		c := *conns
		if sc == "slowpipe" {
			c = *slowConns
		}
		res := map[string][]runResult{}
		for r := range *rounds {
			for i := range entries {
				e := entries[(i+r)%len(entries)]
				rr, err := o.once(sc, e, c)
				if err != nil {
					return fmt.Errorf("%s/%s: %w", sc, e.name, err)
				}
				fmt.Fprintf(os.Stderr, "%s %s round %d: %s\n", sc, e.name, r+1, rr)
				res[e.name] = append(res[e.name], rr)
			}
		}
		printTable(os.Stdout, sc, c, entries, res)
	}
	return nil
}

// entry is one back end as measured: its name in the table, the
// contestant it runs, and the binary that serves it.
type entry struct {
	name, backend, bin string
}
