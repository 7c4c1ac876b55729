package minion

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

func callConfigDir(t *testing.T, fm *fakeMaster) string {
	t.Helper()
	port := 1
	if fm != nil {
		port = fm.retPort()
	}
	dir := t.TempDir()
	conf := "id: m1\nroot_dir: " + dir + "\nmaster: 127.0.0.1\nmaster_port: " + strconv.Itoa(port) +
		"\nenable_fqdns_grains: False\nauth_timeout: 2\nauth_tries: 1\nfile_roots:\n  base: [" + filepath.Join(dir, "srv") + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "srv"), 0o755)
	os.WriteFile(filepath.Join(dir, "srv", "hello.txt"), []byte("hi\n"), 0o644)
	return dir
}

func TestCallWithMaster(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	dir := callConfigDir(t, fm)
	_, err := Call(context.Background(), CallOptions{ConfigDir: dir, Fun: "test.ping"})
	var authErr *AuthError
	if !errors.Is(err, ErrPending) || !errors.As(err, &authErr) {
		t.Fatalf("pending: %v", err)
	}
	fm.set("m1", "accept")
	res, err := Call(context.Background(), CallOptions{ConfigDir: dir, Fun: "test.echo", Args: []string{"hello"}})
	if err != nil || res.Return != "hello" || res.Retcode != 0 || res.Missing {
		t.Fatalf("echo: %+v %v", res, err)
	}
	fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_pillar" })
	ret := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_return" })
	if got, want := keysOf(ret), []string{"cmd", "id", "jid", "return", "retcode", "fun", "fun_args"}; !reflect.DeepEqual(got, want) {
		t.Errorf("_return keys %v, want %v", got, want)
	}
	if ret.Str("jid") != "req" || ret.Str("return") != "hello" || !reflect.DeepEqual(ret.List("fun_args"), []any{"hello"}) {
		t.Errorf("_return %s", mustJSON(ret))
	}
	// event.send from gsalt-call goes straight to the master.
	res, err = Call(context.Background(), CallOptions{ConfigDir: dir, Fun: "event.send", Args: []string{"my/tag", `{"a": 1}`}})
	ev := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_minion_event" })
	if err != nil || res.Return != true || ev.Str("tag") != "my/tag" || strings.Join(keysOf(ev), ",") != "id,tag,data,tok,cmd" {
		t.Errorf("event.send: %v %v %s", res, err, mustJSON(ev))
	}
	if a, _ := ev.Map("data").Int("a"); a != 1 {
		t.Errorf("event data %s", mustJSON(ev))
	}
}

func TestParseInput(t *testing.T) {
	tests := []struct {
		words []string
		want  []any
	}{
		{[]string{"1", "two", "3.5", "true", "None", "[1, 2]", "{a: 1}", "a: 1", "#x", "1_000"},
			[]any{int64(1), "two", 3.5, true, nil, []any{int64(1), int64(2)}, payload.NewMap("a", int64(1)), "a: 1", "#x", "1_000"}},
		{[]string{"20260101000000000001", "k=v", "n=2", "x==y"},
			[]any{"20260101000000000001", "x==y", payload.NewMap("__kwarg__", true, "k", "v", "n", int64(2))}},
		{nil, []any{}},
	}
	for _, tc := range tests {
		got := ParseInput(tc.words)
		if !equalTree(got, tc.want) {
			t.Errorf("ParseInput(%q) = %v, want %v", tc.words, got, tc.want)
		}
	}
}

func equalTree(a, b any) bool {
	am, aok := a.(*payload.Map)
	bm, bok := b.(*payload.Map)
	if aok || bok {
		if !aok || !bok || am.Len() != bm.Len() {
			return false
		}
		for i, it := range am.Items() {
			if !reflect.DeepEqual(it.Key, bm.Items()[i].Key) || !equalTree(it.Value, bm.Items()[i].Value) {
				return false
			}
		}
		return true
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok || bok {
		if !aok || !bok || len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !equalTree(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
