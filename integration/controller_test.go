package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TestControllerLogs runs a real controller (NewUnmanaged + source.Channel)
// on one event: the first reconcile fails, the requeued one succeeds, then
// the controller is stopped.
func TestControllerLogs(t *testing.T) {
	for _, k := range logrKinds {
		for _, verbosity := range []int{0, 5} {
			t.Run(fmt.Sprintf("%s/V=%d", k.name, verbosity), func(t *testing.T) {
				var buf logrBuffer
				logger, closeFn := k.newLogger(&buf, slog.Level(-verbosity))
				defer closeFn()

				var calls atomic.Int32
				done := make(chan struct{})
				var reconcileLine int
				rec := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
					n := calls.Add(1)
					_, reconcileLine = here()
					logf.FromContext(ctx).Info("reconciling", "attempt", n)
					if n == 1 {
						return reconcile.Result{}, errors.New("boom")
					}
					close(done)
					return reconcile.Result{}, nil
				})
				c, err := controller.NewUnmanaged(fmt.Sprintf("pods-v%d", verbosity), controller.Options{
					Reconciler:         rec,
					Logger:             logger,
					SkipNameValidation: ptr.To(true),
				})
				require.NoError(t, err)
				events := make(chan event.GenericEvent, 1)
				require.NoError(t, c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})))
				events <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}}}

				ctx, cancel := context.WithCancel(context.Background())
				stopped := make(chan error, 1)
				go func() { stopped <- c.Start(ctx) }()
				<-done
				cancel()
				require.NoError(t, <-stopped)
				closeFn()

				ls := logrLines(t, buf.String())
				var reconciling, errorsSeen, v5 int
				for _, m := range ls {
					switch msg := m["msg"].(string); {
					case msg == "reconciling":
						reconciling++
						assert.Equal(t, "INFO", m["level"])
						assert.Equal(t, fmt.Sprintf("pods-v%d", verbosity), m["controller"])
						assert.Equal(t, "web-1", m["name"])
						assert.Equal(t, "shop", m["namespace"])
						assert.Equal(t, map[string]any{"name": "web-1", "namespace": "shop"}, m["object"])
						assert.NotEmpty(t, m["reconcileID"])
						assert.Equal(t, fmt.Sprintf("integration/controller_test.go:%d", reconcileLine+1), m["caller"])
					case msg == "Reconciler error":
						errorsSeen++
						assert.Equal(t, "ERROR", m["level"])
						assert.Equal(t, "boom", m["error"])
						assert.Equal(t, "web-1", m["name"])
						assert.NotEmpty(t, m["reconcileID"])
					case msg == "Reconciling" || strings.HasPrefix(msg, "Reconcile done") || msg == "Reconcile successful":
						v5++
						assert.Equal(t, "DEBUG-1", m["level"])
					}
				}
				assert.Equal(t, 2, reconciling, buf.String())
				assert.Equal(t, 1, errorsSeen, buf.String())
				if verbosity >= 5 {
					assert.GreaterOrEqual(t, v5, 3, buf.String()) // two "Reconciling", one "Reconcile successful"
				} else {
					assert.Zero(t, v5, buf.String())
				}
			})
		}
	}
}
