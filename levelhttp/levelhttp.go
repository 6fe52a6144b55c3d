package levelhttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/asyncbus/asyncbus"
)

// rulesPayload is the JSON shape of the HTTP endpoint.
type rulesPayload struct {
	Rules string `json:"rules"`
}

// Handler returns an http.Handler that makes rules readable and changeable
// on a live process, like zap's AtomicLevel: GET answers {"rules":"info,db=debug"}; PUT takes the
// same JSON object, or the bare rule string as text/plain, and answers with
// the rules now in force. A malformed body (bad rules, unknown JSON keys, no
// "rules" key, an empty body, over 64 KiB) gets an error status and changes
// nothing.
func Handler(rules *asyncbus.LevelRules) http.Handler {
	if rules == nil {
		panic("levelhttp: nil rules")
	}
	return handler{rules: rules}
}

type handler struct{ rules *asyncbus.LevelRules }

// ServeHTTP answers GET and PUT as described at Handler.
func (h handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r := h.rules
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch req.Method {
	case http.MethodGet:
		reply(http.StatusOK, rulesPayload{Rules: r.String()})
	case http.MethodPut:
		const limit = 64 << 10
		body, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
		if err != nil {
			reply(http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		if len(body) > limit {
			reply(http.StatusRequestEntityTooLarge, map[string]string{"error": "levelhttp: rules body over 64 KiB"})
			return
		}
		rules := strings.TrimSpace(string(body))
		if strings.HasPrefix(rules, "{") {
			// Strict: a misspelled or missing "rules" key must not reset
			// every logger to the default.
			var p struct {
				Rules *string `json:"rules"`
			}
			dec := json.NewDecoder(strings.NewReader(rules))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil || p.Rules == nil {
				msg := `levelhttp: want {"rules":"..."}`
				if err != nil {
					msg += ": " + err.Error()
				}
				reply(http.StatusBadRequest, map[string]string{"error": msg})
				return
			}
			rules = *p.Rules
		}
		if strings.TrimSpace(rules) == "" {
			reply(http.StatusBadRequest, map[string]string{"error": "levelhttp: empty rules (send \"info\" to reset to Info)"})
			return
		}
		if err := r.Set(rules); err != nil {
			reply(http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		reply(http.StatusOK, rulesPayload{Rules: r.String()})
	default:
		w.Header().Set("Allow", "GET, PUT")
		reply(http.StatusMethodNotAllowed, map[string]string{"error": "levelhttp: only GET and PUT are supported"})
	}
}
