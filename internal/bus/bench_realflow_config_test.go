package bus

// realFlowConfig is the bus configuration the root handler uses by default
// (write-through on, see Options.exitSafe).
func realFlowConfig() Config { return Config{QuietWait: true} }
