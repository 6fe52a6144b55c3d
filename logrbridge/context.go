package logrbridge

import (
	"context"

	"github.com/go-logr/logr"
)

// WithContext returns l with ctx attached: its V levels are checked, and its
// records handed to the handler, with ctx, as slog's InfoContext does. A
// per-request level set with ctxattrs.WithLevel then applies to l's V
// levels (V(1) is slog level -1: a request at slog.LevelDebug writes V(1)
// to V(4)), and the handler's Context hook sees ctx (ctxattrs.Fields, the
// trace ids of otelbridge.TraceContext). logr's LogSink has no context of
// its own, hence this once-per-request step; in a controller-runtime
// reconciler:
//
//	log := logrbridge.WithContext(ctrllog.FromContext(ctx), ctx)
//
// Loggers derived from the result (WithValues, WithName, V) keep ctx; do
// not keep them past the request. l's V level and call depth are kept. l
// may be controller-runtime's delegating ctrl.Log (reached as Flush
// reaches it). A logger this package did not make is returned unchanged.
//
// A slog.Logger over logr.ToSlogHandler(l) gets no context from logr's
// adapter in Enabled: its Debug records are refused before they reach the
// sink whatever the request level. Log through the handler itself
// ([Handler]) to honour it.
func WithContext(l logr.Logger, ctx context.Context) logr.Logger {
	s := sinkOf(l)
	if s == nil {
		return l
	}
	c := *s
	c.ctx = ctx
	return l.WithSink(&c)
}

// context returns the context records and Enabled go to the handler with.
func (s *sink) context() context.Context {
	if s.ctx == nil {
		return context.Background()
	}
	return s.ctx
}
