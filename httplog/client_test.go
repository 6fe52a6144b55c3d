package httplog

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClientAddress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies int
		headers map[string][]string
		want    string
	}{
		{"peer", 0, nil, "192.0.2.1"},
		{"headers not trusted by default", 0, map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "192.0.2.1"},
		{"xff one proxy", 1, map[string][]string{"X-Forwarded-For": {"6.6.6.6, 203.0.113.9"}}, "203.0.113.9"},
		{"xff two proxies", 2, map[string][]string{"X-Forwarded-For": {"6.6.6.6, 203.0.113.9", "10.0.0.2"}}, "203.0.113.9"},
		{"xff fewer than proxies", 3, map[string][]string{"X-Forwarded-For": {"203.0.113.9"}}, "203.0.113.9"},
		{"forwarded first", 1, map[string][]string{
			"Forwarded":       {`for=6.6.6.6, for="[2001:db8::17]:4711";proto=https`},
			"X-Forwarded-For": {"203.0.113.9"},
		}, "2001:db8::17"},
		{"forwarded with port", 1, map[string][]string{"Forwarded": {`For="198.51.100.7:80"`}}, "198.51.100.7"},
		{"forwarded without for", 1, map[string][]string{"Forwarded": {"proto=https"}}, "192.0.2.1"},
		{"empty xff", 1, map[string][]string{"X-Forwarded-For": {" , "}}, "192.0.2.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: "192.0.2.1:5555", Header: http.Header{}}
			for k, vs := range tc.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			assert.Equal(t, tc.want, clientAddress(r, tc.proxies))
		})
	}
}
