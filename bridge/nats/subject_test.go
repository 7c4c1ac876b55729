package nats

import (
	"errors"
	"strings"
	"testing"
)

func TestTagSubject(t *testing.T) {
	for _, c := range []struct {
		prefix, tag string
		escape      bool
		want        string
		err         error
	}{
		{"salt", "salt/job/20260101010101123456/ret/sw1", true, "salt.salt.job.20260101010101123456.ret.sw1", nil},
		{"salt", "salt/job/20260101010101123456/ret/web1.example.com", true, "salt.salt.job.20260101010101123456.ret.web1.example.com", nil},
		{"", "salt/auth", true, "salt.auth", nil},
		{"a.b", "x", true, "a.b.x", nil},
		// Empty segments: "//", leading and trailing "/".
		{"salt", "salt/beacon/m1/inotify//srv/salt/intended", true, "salt.salt.beacon.m1.inotify.%.srv.salt.intended", nil},
		{"salt", "/leading", true, "salt.%.leading", nil},
		{"salt", "trailing/", true, "salt.trailing.%", nil},
		{"salt", "a..b", true, "salt.a.%.b", nil},
		// Characters a subject cannot hold.
		{"salt", "my tag/with space", true, "salt.my%20tag.with%20space", nil},
		{"salt", "glob/*/x", true, "salt.glob.%2A.x", nil},
		{"salt", "a>b/tab\tx", true, "salt.a%3Eb.tab%09x", nil},
		{"salt", "100%/done", true, "salt.100%25.done", nil},
		{"salt", "ünïcode/ok", true, "salt.ünïcode.ok", nil},
		// Without escaping such tags are not mirrored.
		{"salt", "my tag", false, "", ErrUnmappable},
		{"salt", "a//b", false, "", ErrUnmappable},
		{"salt", "a/", false, "", ErrUnmappable},
		{"salt", "a/b-c_d$e", false, "salt.a.b-c_d$e", nil},
		{"salt", strings.Repeat("x/", 2000), true, "", ErrUnmappable},
	} {
		got, err := TagSubject(c.prefix, c.tag, c.escape)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("TagSubject(%q, %q, %v) = %q, %v; want %q, %v", c.prefix, c.tag, c.escape, got, err, c.want, c.err)
		}
	}
}

// TestTailTagRoundTrip: the fire subject of a tag without dots gives the
// tag back.
func TestTailTagRoundTrip(t *testing.T) {
	for _, tag := range []string{
		"salt/beacon/m1/inotify//srv/salt/intended", "/x", "x/", "my tag/100%", "a*b/>/c", "plain/tag", "x",
	} {
		subj, err := TagSubject("", tag, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := TailTag(strings.Split(subj, ".")); got != tag {
			t.Errorf("%q -> %q -> %q", tag, subj, got)
		}
	}
	for toks, want := range map[string]string{
		"a.b.c": "a/b/c", "a.%.c": "a//c", "a.%zz": "a/%zz", "a.%4": "a/%4", "%41%42": "AB",
	} {
		if got := TailTag(strings.Split(toks, ".")); got != want {
			t.Errorf("TailTag(%q) = %q, want %q", toks, got, want)
		}
	}
}

func TestMapping(t *testing.T) {
	for _, c := range []struct {
		subject, tag string
		in           string
		want         string
		ok           bool
	}{
		{"dc1.*.configure", "nats/configure/{1}", "dc1.sw1.configure", "nats/configure/sw1", true},
		{"dc1.*.configure", "nats/configure/{1}", "dc1.sw1.configure.x", "", false},
		{"dc1.*.configure", "nats/configure/{1}", "dc1.configure", "", false},
		{"dc1.*.configure", "nats/configure/{1}", "dc2.sw1.configure", "", false},
		{"*.*.configure", "intended/{2}/{1}", "dc9.r7.configure", "intended/r7/dc9", true},
		{"dc1.>", "site/dc1/{1}", "dc1.sw1.configure", "site/dc1/sw1/configure", true},
		{"dc1.>", "site/dc1/{1}", "dc1", "", false},
		{"dc1.*.>", "{subject}", "dc1.a.b.c", "dc1/a/b/c", true},
		{"x.y", "const/tag", "x.y", "const/tag", true},
		{"x.*", "{0}:{{{1}}}", "x.7", "x/7:{7}", true},
	} {
		m, err := NewMapping(c.subject, c.tag)
		if err != nil {
			t.Fatalf("%q %q: %v", c.subject, c.tag, err)
		}
		got, ok := m.TagFor(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%q -> %q on %q: %q %v, want %q %v", c.subject, c.tag, c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestMappingErrors(t *testing.T) {
	for _, c := range []struct {
		subject, tag string
		err          error
	}{
		{"dc1.*.configure", "t/{2}", ErrTagTemplate},
		{"dc1.*.configure", "t/{x}", ErrTagTemplate},
		{"dc1.*.configure", "t/{1", ErrTagTemplate},
		{"dc1.*.configure", "t/}", ErrTagTemplate},
		{"dc1.*.configure", "", ErrTagTemplate},
		{"dc1..configure", "t", ErrSubject},
		{"dc1.>.configure", "t", ErrSubject},
		{"dc1.a*.configure", "t", ErrSubject},
		{"dc1.a b", "t", ErrSubject},
		{"", "t", ErrSubject},
	} {
		if _, err := NewMapping(c.subject, c.tag); !errors.Is(err, c.err) {
			t.Errorf("NewMapping(%q, %q): %v, want %v", c.subject, c.tag, err, c.err)
		}
	}
}

func TestFireMapping(t *testing.T) {
	c, err := Parse(map[string]any{"url": "nats://127.0.0.1:1", "subject_prefix": "gs.x"}, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Subscribe) != 1 || c.Subscribe[0].Subject != "gs.x.fire.>" {
		t.Fatalf("subscriptions %+v", c.Subscribe)
	}
	m := &c.Subscribe[0]
	for in, want := range map[string]string{
		"gs.x.fire.watch.sw1.changed":              "watch/sw1/changed",
		"gs.x.fire.salt.beacon.m.inotify.%.srv.sw": "salt/beacon/m/inotify//srv/sw",
		"gs.x.fire.a%20b":                          "a b",
	} {
		if got, ok := m.TagFor(in); !ok || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"gs.x.fire", "gs.x.other.a", "gs.fire.a"} {
		if got, ok := m.TagFor(in); ok {
			t.Errorf("%q matched: %q", in, got)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"salt.fire.>", "salt.fire.>", true},
		{"salt.>", "salt.fire.>", true},
		{">", "dc1.*.configure", true},
		{"dc1.*.configure", "dc1.*.configure", true},
		{"dc1.*.*", "dc1.*.configure", true},
		{"dc1.sw1.configure", "dc1.*.configure", false},
		{"dc1.*", "dc1.>", false},
		{"dc1.*.configure", "dc1.>", false},
		{"salt.fire.>", "salt.fire", false},
		{"dc1.a", "dc1.a.b", false},
		{"dc1.a.b", "dc1.a", false},
	} {
		if got := covers(c.a, c.b); got != c.want {
			t.Errorf("covers(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
