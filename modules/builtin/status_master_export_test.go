package builtin

// Test access to status.master's connection readers.
var (
	BuiltinParseSS = statusParseSS
	BuiltinProcTCP = statusProcTCPEstablished
)
