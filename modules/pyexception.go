package modules

// PyException is an error a function raises as a named Python exception
// other than Salt's own (ValueError, KeyError, ...): a minion reports it
// as "The minion function caused an exception: <Class>: <Message>" and a
// state's traceback ends in "<Class>: <Message>".
type PyException struct {
	Class, Message string
}

func (e *PyException) Error() string { return e.Class + ": " + e.Message }
