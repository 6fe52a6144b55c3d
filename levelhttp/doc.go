// Package levelhttp serves asyncbus per-logger level rules over HTTP, so
// that an operator can read and change them on a live process:
//
//	rules := asyncbus.MustParseLevelRules("info,db=debug")
//	h := asyncbus.NewHandler(os.Stdout, &asyncbus.Options{Rules: rules})
//	http.Handle("/log/level", levelhttp.Handler(rules))
//
// It is a separate package so that importing asyncbus never pulls in
// net/http.
package levelhttp
