package httplog

import (
	"crypto/tls"
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

func TestScheme(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies int
		tls     bool
		headers map[string][]string
		want    string
	}{
		{"received", 0, false, nil, "http"},
		{"received over TLS", 0, true, nil, "https"},
		{"headers not trusted by default", 0, false, map[string][]string{"X-Forwarded-Proto": {"https"}}, "http"},
		{"xfp one proxy", 1, false, map[string][]string{"X-Forwarded-Proto": {"https"}}, "https"},
		{"xfp case", 1, true, map[string][]string{"X-Forwarded-Proto": {"HTTP"}}, "http"},
		{"xfp two proxies", 2, false, map[string][]string{"X-Forwarded-Proto": {"http, https", "http"}}, "https"},
		{"xfp not a scheme", 1, true, map[string][]string{"X-Forwarded-Proto": {"gopher"}}, "https"},
		{"forwarded, the client address's element", 1, false, map[string][]string{
			"Forwarded":         {`for=6.6.6.6;proto=http, for="[2001:db8::17]:4711";proto=https`},
			"X-Forwarded-Proto": {"http"},
		}, "https"},
		{"forwarded two proxies", 2, false, map[string][]string{"Forwarded": {`for=203.0.113.9;Proto=https`, `for=10.0.0.2;proto=http`}}, "https"},
		{"forwarded element without proto", 1, true, map[string][]string{"Forwarded": {`for=6.6.6.6;proto=http, for=203.0.113.9`}}, "https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: "192.0.2.1:5555", Header: http.Header{}}
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, vs := range tc.headers {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			assert.Equal(t, tc.want, scheme(r, tc.proxies))
		})
	}
}
