package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is what a load generator process prints on stdout.
type loadResult struct {
	Requests uint64        `json:"requests"`
	Failures uint64        `json:"failures"`
	Elapsed  time.Duration `json:"elapsed"`
}

// generate drives addr with conns keep-alive connections for dur and
// prints a loadResult: the external load generator (wrk is not installed).
func generate(addr string, conns int, dur time.Duration) error {
	tr := &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	url := "http://" + addr + "/orders/42?expand=items"
	var ok, failed atomic.Uint64
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				resp, err := client.Get(url)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res := loadResult{Requests: ok.Load(), Failures: failed.Load(), Elapsed: time.Since(start)}
	js, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(os.Stdout, "%s\n", js)
	return err
}
