package redact_test

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/redact"
)

func Example() {
	r := redact.New(redact.Config{
		Keys:   []string{"password"},
		Paths:  []string{"req.headers.authorization"},
		Values: []redact.Matcher{redact.BearerToken, redact.JWT},
	})
	// Then chains another ReplaceAttr (here one dropping the time, for a
	// stable output) after the redaction.
	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{ReplaceAttr: r.Then(noTime)})
	log := slog.New(h)

	log.Info("login", "user", "ann", "password", "hunter2")
	log.Info("request", slog.Group("req",
		slog.Group("headers", "Authorization", "Basic YW5uOmh1bnRlcjI=", "Accept", "*/*")))
	log.Warn("upstream said: invalid token Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig")
	// Attributes of With are redacted once, here, not per record.
	log.With("password", "again").Info("bound")
	h.Close()
	fmt.Println("redactions:", r.Redactions())
	// Output:
	// {"level":"INFO","msg":"login","user":"ann","password":"[REDACTED]"}
	// {"level":"INFO","msg":"request","req":{"headers":{"Authorization":"[REDACTED]","Accept":"*/*"}}}
	// {"level":"WARN","msg":"upstream said: invalid token Bearer [REDACTED]"}
	// {"level":"INFO","msg":"bound","password":"[REDACTED]"}
	// redactions: 4
}
