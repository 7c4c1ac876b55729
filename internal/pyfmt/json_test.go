package pyfmt

import "testing"

// The wanted texts are what CPython 3.11's json.dumps writes for the same
// str (ensure_ascii False and True); the last two rows are Go strings that
// are not valid UTF-8, which Python never holds.
func TestJSONString(t *testing.T) {
	tests := []struct {
		in, plain, ascii string
	}{
		{"", `""`, `""`},
		{"a\"b\\c", `"a\"b\\c"`, `"a\"b\\c"`},
		{"\n\r\t\b\f\x01\x1f", `"\n\r\t\b\f\u0001\u001f"`, `"\n\r\t\b\f\u0001\u001f"`},
		{"~\x7fé\u2028", "\"~\x7fé\u2028\"", `"~\u007f\u00e9\u2028"`},
		{"\U0001F600", "\"\U0001F600\"", `"\ud83d\ude00"`},
		{"a\xffb", "\"a\xffb\"", `"a\ufffdb"`},
		{"\xed\xa0\x80", "\"\xed\xa0\x80\"", `"\ufffd\ufffd\ufffd"`},
	}
	for _, tc := range tests {
		if got := JSONString(tc.in, false); got != tc.plain {
			t.Errorf("JSONString(%q, false) = %q, want %q", tc.in, got, tc.plain)
		}
		if got := JSONString(tc.in, true); got != tc.ascii {
			t.Errorf("JSONString(%q, true) = %q, want %q", tc.in, got, tc.ascii)
		}
	}
}
