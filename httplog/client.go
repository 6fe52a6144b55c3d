package httplog

import (
	"net"
	"net/http"
	"strings"
)

// clientAddress returns the client's address of r: the host of
// RemoteAddr with proxies 0, else the proxies-th address from the right
// of the Forwarded header or, without one, of X-Forwarded-For (the
// left-most when there are fewer).
func clientAddress(r *http.Request, proxies int) string {
	if proxies > 0 {
		if fwd := r.Header.Values("Forwarded"); len(fwd) > 0 {
			if a := nthFromRight(fwd, proxies, forwardedFor); a != "" {
				return a
			}
		} else if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			if a := nthFromRight(xff, proxies, strings.TrimSpace); a != "" {
				return a
			}
		}
	}
	return hostOnly(r.RemoteAddr)
}

// nthFromRight returns the n-th non-empty element from the right of the
// comma-separated lists in values, each element read by parse; with fewer
// elements, the left-most.
func nthFromRight(values []string, n int, parse func(string) string) string {
	var found string
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			var elem string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				elem, v = v[j+1:], v[:j]
			} else {
				elem, v = v, ""
			}
			a := parse(elem)
			if a == "" {
				continue
			}
			found = a
			if n--; n == 0 {
				return hostOnly(found)
			}
		}
	}
	return hostOnly(found)
}

// forwardedFor returns the for= parameter of one Forwarded element
// (RFC 7239), unquoted; "" without one.
func forwardedFor(elem string) string {
	for _, pair := range strings.Split(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(k, "for") {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// hostOnly returns addr without its port and IPv6 brackets.
func hostOnly(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]")
}
