package encode

import "strconv"

// String returns f's name as it is written in Go: "JSON", "ZapConsole",
// "ZapJSON.WithZapTime(ZapTimeNanos).WithZapLevels()", or "Format(N)" for a
// value that is not a format.
func (f Format) String() string {
	switch {
	case f.isZap():
		s := "ZapJSON"
		if f&0xff == ZapConsole {
			s = "ZapConsole"
		}
		if t := ZapTime(f >> zapTimeShift & 0xff); t != ZapTimeRFC3339 {
			s += ".WithZapTime(" + t.String() + ")"
		}
		if f&zapLevelsBit != 0 {
			s += ".WithZapLevels()"
		}
		return s
	case !f.Valid():
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
	return formatNames[f]
}

// formatNames names the formats other than the zap ones.
var formatNames = map[Format]string{
	JSON:        "JSON",
	Text:        "Text",
	Logfmt:      "Logfmt",
	Console:     "Console",
	GCPJSON:     "GCPJSON",
	ECSJSON:     "ECSJSON",
	DatadogJSON: "DatadogJSON",
}

// String returns t's name as it is written in Go ("ZapTimeNanos"), or
// "ZapTime(N)" for a value that is not a time encoding.
func (t ZapTime) String() string {
	if int(t) < len(zapTimeNames) {
		return zapTimeNames[t]
	}
	return "ZapTime(" + strconv.Itoa(int(t)) + ")"
}

// zapTimeNames names the ZapTime values, in order.
var zapTimeNames = [...]string{
	ZapTimeRFC3339:     "ZapTimeRFC3339",
	ZapTimeRFC3339Nano: "ZapTimeRFC3339Nano",
	ZapTimeISO8601:     "ZapTimeISO8601",
	ZapTimeEpoch:       "ZapTimeEpoch",
	ZapTimeMillis:      "ZapTimeMillis",
	ZapTimeNanos:       "ZapTimeNanos",
}
