// Package logrbridge makes any [log/slog.Handler] (asyncbus's in particular)
// the backend of a [github.com/go-logr/logr.Logger], so that code logging
// through logr (controller-runtime's ctrl.Log, client-go through klog) writes
// into the same pipeline as code logging through slog.
//
// # Generic use
//
//	h := asyncbus.NewHandler(os.Stderr, &asyncbus.Options{AddSource: true})
//	defer h.Close()
//	log := logrbridge.NewLogger(h)
//
// # controller-runtime drop-in
//
// Package [github.com/asyncbus/asyncbus/logrbridge/zap] replaces
// sigs.k8s.io/controller-runtime/pkg/log/zap: same names and flags, zap's
// output, and only the import path of a kubebuilder scaffold changes.
//
// # Flushing
//
// [Flush] and [Close] reach the handler behind a logger of this package,
// also through controller-runtime's delegating ctrl.Log once SetLogger has
// run:
//
//	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
//	defer logrbridge.Flush(ctrl.Log)
//
// With [CloseWhenUnreachable], the handler is closed (flushed and stopped)
// once every logger made from it is unreachable: loggers made and dropped,
// one per test say, leave no goroutine behind. The drop-in's New sets it.
//
// # Mapping
//
//   - V(n).Info becomes a slog record at level -n; Enabled(n) asks the
//     handler about level -n ([Zapr]: n at most 127, as zapr), with
//     context.Background(), or with the context given to [WithContext],
//     which also carries a per-request level (ctxattrs.WithLevel).
//   - Error is always a record at [slog.LevelError], whatever V; a non-nil error
//     is written first, under the error key (default "error").
//   - Names are joined with "." (configurable) and written under "logger"
//     (configurable), before every WithValues pair.
//   - Keys and values: a non-string key is rendered with fmt.Sprint; a final
//     key without a value gets the value "(MISSING)" (klog's rendering); the
//     pairs that follow a bad key are kept. [Zapr] follows zapr instead: a
//     line at level Error+1 (zap's DPanic) reports the bad key, and the
//     record keeps only the pairs before it.
//   - Values: logr.Marshaler is applied first (once: a MarshalLog returning
//     another Marshaler is not applied again), then slog.LogValuer is
//     resolved, then fmt.Stringer and error are turned into strings. A
//     panic in any of these methods is caught and rendered as
//     "<panic: VALUE>" (klog's and funcr's rendering). [Zapr] follows
//     zapr and zap instead: "<nil>" for a nil pointer, KEY+"Error" with
//     "PANIC=VALUE" for other panics.
//   - A MarshalLog result that is a struct with exactly the two string fields
//     Name and Namespace (klog.ObjectRef, types.NamespacedName) becomes the
//     group {"name":…,"namespace":…}; namespace is left out when empty, like
//     klog's and apimachinery's own JSON.
//   - With [ShrinkObjects], a value with GetName() and GetNamespace() methods
//     (any Kubernetes object) is written as the same group.
package logrbridge
