package unixcrypt

import (
	"strings"
	"testing"
)

// TestCrypt checks hashes against Python's crypt.crypt (libxcrypt on
// Debian 12), which printed the expected column.
func TestCrypt(t *testing.T) {
	cases := []struct{ pw, setting, want string }{
		{"Hello world!", "$5$saltstring", "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"Hello world!", "$6$saltstring", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
		{"Hello world!", "$6$rounds=10000$saltstringsaltstring", "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v."},
		{"Hello world!", "$5$rounds=10$roundstoolow", "*0"},
		{"", "$6$abc", "$6$abc$mJP3a6FyA8uCnzRtlnNypPwjnvpi5TP9qOrInzrfDmwxUQG38PkpCPdqfTb8JQfAngapMxeim4AZ..hSdRRzD."},
		{"pw", "$1$abcdefghijk", "$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc."},
		{strings.Repeat("a", 200), "$6$xyz", "$6$xyz$nkhmI.VD2B3AfBOPe.kSWLfDUdE6gvOyHWzMUsmQjXAdDiVTyDT1dipe3F9GkjdnufWBftx.csERzWua0clo5/"},
		{strings.Repeat("a", 70), "$5$xyz", "$5$xyz$Jw2KP8i3Rg985pbPsOkepxv09WwdbGegRV..4pXI7l7"},
		{strings.Repeat("a", 40), "$1$xy", "$1$xy$pUub5uX9loeQqtCXjIwBI0"},
		{"pw", "$6$a:b", "*0"},
		{"pw", "$6$abc$ignored", "$6$abc$MtSdWSZbhct2oe.SOqOUM2M/GA/uj5.vyVtJgRHgKi9uqXuWuJqOYE7H/YlsYGVg/YYzDV0xt3fEIwYt580.5."},
		{"pw", "$1$a_b", "$1$a_b$a6W7FYXrVxGLu/7043Qcj1"},
		{"pw", "$6$a b", "*0"},
		{"pw", "$6$a\\b", "*0"},
		{"pw", "$6$a\xe9b", "*0"},
		{"héllo", "$6$u", "$6$u$LpC3O3gP2B4CfzwzL9hEW5T2ebtOGQQsRolQwEn/L/Vs0C34Y09NCcgw5muTJPnI2U.9XlDHy1ssnaidU3zN41"},
	}
	for _, c := range cases {
		got, err := Crypt(c.pw, c.setting)
		if err != nil {
			t.Fatalf("%q: %v", c.setting, err)
		}
		if got != c.want {
			t.Errorf("Crypt(%q, %q) = %q, want %q", c.pw, c.setting, got, c.want)
		}
	}
	if _, err := Crypt("pw", "$2b$05$abc"); err == nil {
		t.Fatal("blowfish: want ErrUnsupported")
	}
}

// TestMkSalt checks the random setting's shape and that it hashes.
func TestMkSalt(t *testing.T) {
	for _, m := range Methods {
		s, err := MkSalt(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, "$"+m.Ident+"$") || len(s) != len(m.Ident)+2+m.SaltLen || !validSalt(s[len(m.Ident)+2:]) {
			t.Fatalf("%s: bad salt %q", m.Name, s)
		}
		h, err := Crypt("x", s)
		if err != nil || !strings.HasPrefix(h, s+"$") {
			t.Fatalf("%s: %q %v", m.Name, h, err)
		}
	}
}
