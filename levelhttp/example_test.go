package levelhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/asyncbus/asyncbus"
	"github.com/asyncbus/asyncbus/levelhttp"
)

// Serving the per-logger levels: GET reads them, PUT replaces them, and
// handlers built with the same rules follow at once.
func Example() {
	rules := asyncbus.MustParseLevelRules("info,db=debug")
	srv := httptest.NewServer(levelhttp.Handler(rules)) // in a service: http.Handle("/debug/log", ...)
	defer srv.Close()

	show := func(resp *http.Response, err error) {
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))
	}
	show(http.Get(srv.URL))
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader(`{"rules":"warn,db=info"}`))
	show(http.DefaultClient.Do(req))
	fmt.Println(rules.Level("db"), rules.Level("http"))
	// Output:
	// 200 {"rules":"info,db=debug"}
	// 200 {"rules":"warn,db=info"}
	// INFO WARN
}
