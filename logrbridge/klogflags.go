package logrbridge

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// RuleSetter is what klog's flags set: an *asyncbus.LevelRules (its Set
// takes rules such as "info,db=debug").
type RuleSetter interface {
	Set(rules string) error
}

// BindKlogFlags defines klog's two verbosity flags on fs, as
// controller-runtime components and client-go programs take them, and
// sets rules from them (the rules of the handler behind a logger of this
// package, made with asyncbus.Options.Rules):
//
//   - -v N makes V(0) to V(N) visible for every logger: the default level
//     becomes slog level -N (a logr V(n) record is slog level -n);
//   - -vmodule name=N,... does the same for the logger called name (the
//     names WithName joins with ".") and its descendants.
//
// What does not map: klog's -vmodule patterns name source files, as
// globs ("controller*=4", "pkg/reconcile/*=2"), and govern the calls made
// in them; here a pattern is a logger name, matched without globs, and
// governs that logger wherever it logs. A pattern with '*', '?' or '['
// is refused, as is anything that is not a logger name. klog's other
// flags (-logtostderr, -log_file, ...) have no counterpart: the handler's
// output and format are chosen in code. Calls made through klog itself
// (client-go's klog.V(n)) stay gated by klog's own -v; these flags set
// the asyncbus rules only.
//
// klog.InitFlags defines flags of the same names: give fs to one or the
// other. Each flag's Set replaces the whole rule set with the one both
// flags give (KlogRules), so rules set before (from the environment, say)
// hold only until one of these flags is given. A bad value is refused by
// fs.Parse, naming the flag, and changes nothing.
func BindKlogFlags(fs *flag.FlagSet, rules RuleSetter) {
	f := &klogFlags{rules: rules}
	fs.Var(klogFlag{f, &f.v}, "v", "number for the log level verbosity: V(0) to V(N) are written (the default level becomes slog level -N)")
	fs.Var(klogFlag{f, &f.vmodule}, "vmodule", "comma-separated list of name=N settings for per-logger verbosity (logger names, not klog's file globs)")
}

// klogFlags holds the two flags' values; a Set of either applies both.
type klogFlags struct {
	mu         sync.Mutex // flags are set from one goroutine in practice; guards v and vmodule anyway
	v, vmodule string
	rules      RuleSetter
}

// klogFlag is one of the two flags: a flag.Value over its field.
type klogFlag struct {
	f     *klogFlags
	value *string
}

func (k klogFlag) String() string {
	if k.f == nil {
		return ""
	}
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	return *k.value
}

func (k klogFlag) Set(s string) error {
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	old := *k.value
	*k.value = s
	rules, err := KlogRules(k.f.v, k.f.vmodule)
	if err == nil {
		err = k.f.rules.Set(rules)
	}
	if err != nil {
		*k.value = old
	}
	return err
}

// KlogRules returns the asyncbus level rules that klog's -v and -vmodule
// values stand for (see BindKlogFlags): "-v 2 -vmodule controller=4" gives
// "-2,controller=-4" (slog levels: V(2) is -2). An empty v means 0.
func KlogRules(v, vmodule string) (string, error) {
	def := 0
	if strings.TrimSpace(v) != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32) // klog's Level is an int32
		if err != nil {
			return "", fmt.Errorf("logrbridge: -v %q: want an integer", v)
		}
		def = int(n)
	}
	rules := []string{strconv.Itoa(-def)}
	for part := range strings.SplitSeq(vmodule, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, level, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return "", fmt.Errorf("logrbridge: -vmodule %q: %q is not name=N", vmodule, part)
		}
		if strings.ContainsAny(name, "*?[") {
			return "", fmt.Errorf("logrbridge: -vmodule %q: %q is a glob; asyncbus matches logger names, not klog's file patterns (a name governs its descendants too)", vmodule, name)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(level), 10, 32)
		if err != nil {
			return "", fmt.Errorf("logrbridge: -vmodule %q: %q: want an integer verbosity", vmodule, part)
		}
		rules = append(rules, name+"="+strconv.Itoa(-int(n)))
	}
	return strings.Join(rules, ","), nil
}
