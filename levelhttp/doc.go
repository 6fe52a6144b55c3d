// Package levelhttp serves asyncbus per-logger level rules over HTTP, so
// that an operator can read and change them on a live process:
//
//	rules := asyncbus.MustParseLevelRules("info,db=debug")
//	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules})
//	adminMux.Handle("/log/level", requireAdmin(levelhttp.Handler(rules))) // requireAdmin: the application's own auth
//
// The handler has no authentication or authorisation of its own: anyone
// who can reach it can read the rules and change every logger's level (for
// example turn on debug output, which may carry data not meant for the
// logs, or silence errors). Mount it behind the application's own
// authentication, on an admin or localhost-only listener, never on a
// public mux as it is.
//
// It is a separate package so that importing asyncbus never pulls in
// net/http.
package levelhttp
