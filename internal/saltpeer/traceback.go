package saltpeer

import (
	"regexp"
	"strings"
)

// Python tracebacks in state comments ("An exception occurred in this
// state: Traceback ...") name the interpreter's and Salt's own source files,
// line numbers and code excerpts, which gsalt has no counterpart for (its
// tracebacks have one "<gsalt>" frame). StableTraceback keeps what both can
// agree on.
var (
	// tbChained is one exception of a chain before the last one.
	tbChained = regexp.MustCompile(`(?s)Traceback \(most recent call last\):\n.*?\n\n(?:During handling of the above exception, another exception occurred|The above exception was the direct cause of the following exception):\n\n`)
	// tbFrames are a traceback's frame lines (each indented).
	tbFrames = regexp.MustCompile(`Traceback \(most recent call last\):\n(?:  [^\n]*\n)*`)
	// tbEmbedded is a traceback on lines of its own inside an exception's
	// message (SaltRenderError's trace=), after tbFrames, with its final
	// exception line and the blank line Salt adds after it.
	tbEmbedded = regexp.MustCompile(`\nTraceback \(most recent call last\):\n  \.\.\.\n[^\n]*\n\n?`)
)

// StableTraceback returns s with its Python tracebacks reduced to the
// parts that do not depend on the interpreter or the source tree: every
// exception of a chain but the last is dropped, frame lines become one
// "  ..." line, and a traceback that a message carries on lines of its own
// (a SaltRenderError's trace, repeating the exception the message already
// names) is dropped, and so is the start of that traceback that Salt's
// error context shows after a short template's last line (Salt appends
// the trace to the template text it excerpts). What stays is the text around the tracebacks and the
// final "Class: message" line. Text without a traceback is returned as is.
func StableTraceback(s string) string {
	if !strings.Contains(s, "Traceback (most recent call last):\n") {
		return s
	}
	for {
		t := tbChained.ReplaceAllLiteralString(s, "")
		if t == s {
			break
		}
		s = t
	}
	s = tbFrames.ReplaceAllLiteralString(s, "Traceback (most recent call last):\n  ...\n")
	return tbEmbedded.ReplaceAllLiteralString(s, "")
}
