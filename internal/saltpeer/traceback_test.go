package saltpeer

import "testing"

func TestStableTraceback(t *testing.T) {
	// Salt's comment of a file.managed whose template raised a TypeError
	// (test=True): a chained traceback, then SaltRenderError whose message
	// carries the template's traceback before "; line N".
	salt := "An exception occurred in this state: Traceback (most recent call last):\n" +
		"  File \"/srv/salt/salt/utils/templates.py\", line 477, in render_jinja_tmpl\n" +
		"    output = template.render(**decoded_context)\n" +
		"             ^^^^^^^^^^^^^^^^^^\n" +
		"  File \"<template>\", line 3, in top-level template code\n" +
		"TypeError: '<' not supported between instances of 'str' and 'int'\n" +
		"\n" +
		"During handling of the above exception, another exception occurred:\n" +
		"\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/srv/salt/salt/state.py\", line 2401, in call\n" +
		"    ret = self.states[cdata[\"full\"]](\n" +
		"salt.exceptions.SaltRenderError: Jinja error: '<' not supported between instances of 'str' and 'int'\n" +
		"Traceback (most recent call last):\n" +
		"  File \"/srv/salt/salt/utils/templates.py\", line 477, in render_jinja_tmpl\n" +
		"  File \"<template>\", line 3, in top-level template code\n" +
		"TypeError: '<' not supported between instances of 'str' and 'int'\n" +
		"\n" +
		"; line 3\n\n---\n{{ x|dictsort }}    <======================\n---\n"
	gsalt := "An exception occurred in this state: Traceback (most recent call last):\n" +
		"  File \"<gsalt>\", in file.managed\n" +
		"salt.exceptions.SaltRenderError: Jinja error: '<' not supported between instances of 'str' and 'int'; line 3\n\n---\n{{ x|dictsort }}    <======================\n---\n"
	stable := "An exception occurred in this state: Traceback (most recent call last):\n  ...\n" +
		"salt.exceptions.SaltRenderError: Jinja error: '<' not supported between instances of 'str' and 'int'; line 3\n\n---\n{{ x|dictsort }}    <======================\n---\n"
	for _, tc := range []struct{ name, in, want string }{
		{"salt chained with embedded trace", salt, stable},
		{"gsalt one frame", gsalt, stable},
		{"short template: the error context shows the start of the trace",
			"Unable to manage file: Jinja error: boom\nTraceback (most recent call last):\n  File \"t.py\", line 1, in f\nTypeError: boom\n\n; line 2\n\n---\na\n{{ x }}    <======================\n{{ y }}\n\nTraceback (most recent call last):\n  File \"t.py\", line 1, in f\n[...]\n---",
			"Unable to manage file: Jinja error: boom; line 2\n\n---\na\n{{ x }}    <======================\n{{ y }}\n---"},
		{"no traceback", "File /etc/x is in the correct state", "File /etc/x is in the correct state"},
		{"embedded trace without a line",
			"Unable to manage file: Jinja error: boom\nTraceback (most recent call last):\n  File \"<template>\", line 1, in top-level template code\nZeroDivisionError: division by zero\n\n",
			"Unable to manage file: Jinja error: boom"},
		{"bare traceback kept with its last line",
			"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad\n",
			"Traceback (most recent call last):\n  ...\nValueError: bad\n"},
		{"direct cause chain",
			"x: Traceback (most recent call last):\n  File \"a\", line 1\nKeyError: 'a'\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"b\", line 2\nValueError: b\n",
			"x: Traceback (most recent call last):\n  ...\nValueError: b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StableTraceback(tc.in); got != tc.want {
				t.Errorf("StableTraceback:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
