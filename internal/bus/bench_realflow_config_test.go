package bus

// realFlowConfig is the bus configuration the root handler uses by default
// (the quiet wait on, see callersWait).
func realFlowConfig() Config { return Config{QuietWait: true} }
