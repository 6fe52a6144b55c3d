package levelhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/asyncbus/asyncbus"
)

// maxBody is the largest PUT body accepted; a rule string is a few hundred
// bytes, so anything near this is a mistake or an attack.
const maxBody = 64 << 10

// rulesPayload is the JSON shape of the HTTP endpoint.
type rulesPayload struct {
	Rules string `json:"rules"`
}

// Handler returns an http.Handler that makes rules readable and changeable
// on a live process, like zap's AtomicLevel. It does no authentication:
// mount it behind the application's own (see the package doc). GET answers
// {"rules":"info,db=debug"}; PUT takes the same JSON object, or the bare rule
// string as text/plain, and answers with the rules now in force.
//
// A PUT body is taken as JSON when it starts with '{' (whatever its
// Content-Type) or is sent as application/json; otherwise it is the bare
// rule string, which must be sent as text/plain or without a Content-Type:
// any other type (a form, as curl -d sends by default) gets 415 with a
// message saying what to send. A JSON body must be exactly one object
// with exactly one key, "rules" (spelt so: encoding/json's
// case-insensitive matching is not used), whose value is a non-empty
// string. Anything else — malformed JSON (the error gives the byte offset
// and what was expected there), trailing data, a second object, a
// duplicate, unknown or differently-cased key, a value of another type, an
// empty body, malformed rules — gets 400, and a body over 64 KiB gets 413,
// each with {"error":"..."} saying what is wrong; a rejected PUT changes
// nothing.
//
// Handler(nil) does not panic: the endpoint it returns answers every request
// with 500 and {"error":"levelhttp: no level rules (Handler was given nil)"},
// so a wiring mistake shows on the debug endpoint instead of taking the
// process down. (asyncbus.LevelRulesFromEnv never returns nil rules.)
func Handler(rules *asyncbus.LevelRules) http.Handler {
	return handler{rules: rules}
}

type handler struct{ rules *asyncbus.LevelRules }

// ServeHTTP answers GET and PUT as described at Handler.
func (h handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	fail := func(code int, msg string) { reply(code, map[string]string{"error": msg}) }
	if h.rules == nil {
		fail(http.StatusInternalServerError, "levelhttp: no level rules (Handler was given nil)")
		return
	}
	switch req.Method {
	case http.MethodGet:
		reply(http.StatusOK, rulesPayload{Rules: h.rules.String()})
	case http.MethodPut:
		body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
		if err != nil {
			fail(http.StatusBadRequest, "levelhttp: reading the body: "+err.Error())
			return
		}
		if len(body) > maxBody {
			fail(http.StatusRequestEntityTooLarge, "levelhttp: body over 64 KiB")
			return
		}
		if err := checkBareRulesType(body, req.Header.Get("Content-Type")); err != nil {
			fail(http.StatusUnsupportedMediaType, err.Error())
			return
		}
		rules, err := rulesFromBody(body, req.Header.Get("Content-Type"))
		if err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		if err := h.rules.Set(rules); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, rulesPayload{Rules: h.rules.String()})
	default:
		w.Header().Set("Allow", "GET, PUT")
		fail(http.StatusMethodNotAllowed, "levelhttp: only GET and PUT are supported")
	}
}

// checkBareRulesType refuses a body that is neither JSON nor sent as a
// rule string: a bare rule string must come as text/plain or without a
// Content-Type. A form (curl -d 'rules=warn' sends
// application/x-www-form-urlencoded) would otherwise be taken as the rule
// "rules=warn", which also resets the default level to Info.
func checkBareRulesType(body []byte, contentType string) error {
	if text := bytes.TrimSpace(body); len(text) > 0 && text[0] == '{' {
		return nil // JSON, whatever the type: curl -d '{"rules":"warn"}' sends a form type
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	switch {
	case contentType == "", err == nil && (mediaType == "text/plain" || mediaType == "application/json"):
		return nil
	case err != nil:
		mediaType = contentType
	}
	return fmt.Errorf(`levelhttp: Content-Type %q is not accepted: send {"rules":"..."} as JSON, or the bare rules as text/plain `+
		`(curl -X PUT -H 'Content-Type: text/plain' --data-binary 'info,db=debug')`, abbreviate([]byte(mediaType)))
}

// rulesFromBody returns the rule string a PUT body carries, or an error
// saying why the body is malformed.
func rulesFromBody(body []byte, contentType string) (string, error) {
	text := bytes.TrimSpace(body)
	mediaType, _, _ := mime.ParseMediaType(contentType)
	var rules string
	if len(text) > 0 && text[0] == '{' || mediaType == "application/json" {
		r, err := decodeRulesObject(body)
		if err != nil {
			return "", fmt.Errorf(`levelhttp: want {"rules":"..."}: %w`, err)
		}
		rules = r
	} else {
		rules = string(text)
	}
	if strings.TrimSpace(rules) == "" {
		return "", errors.New(`levelhttp: empty rules (send "info" to reset to Info)`)
	}
	return rules, nil
}

// decodeRulesObject decodes {"rules":"..."} strictly. It reads the body's
// members as sent rather than decoding into a struct, because
// encoding/json would take "Rules" or "RULES" for "rules" and let a later
// duplicate key silently win; the body must be one object with nothing
// after it, and a malformed one is reported with the offset and what was
// expected there (scanObject).
func decodeRulesObject(body []byte) (string, error) {
	text := bytes.TrimSpace(body)
	if len(text) == 0 {
		return "", errors.New("empty body")
	}
	if text[0] != '{' {
		return "", errors.New("body is not a JSON object")
	}
	members, err := scanObject(body)
	if err != nil {
		return "", err
	}
	var rules *string
	for _, m := range members {
		var key string
		if err := json.Unmarshal(m.key, &key); err != nil {
			return "", err // unreachable: scanObject checked the key's syntax
		}
		switch {
		case key != "rules":
			return "", fmt.Errorf("unknown key %q (the only key is \"rules\", in lower case)", key)
		case rules != nil:
			return "", errors.New(`key "rules" given twice`)
		}
		var s string
		if m.value[0] != '"' || json.Unmarshal(m.value, &s) != nil {
			return "", fmt.Errorf(`"rules" must be a JSON string, not %s`, abbreviate(m.value))
		}
		rules = &s
	}
	if rules == nil {
		return "", errors.New(`no "rules" key`)
	}
	return *rules, nil
}

// abbreviate keeps an echoed JSON value short in an error message.
func abbreviate(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}
