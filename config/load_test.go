package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// salt3006Files are config trees exercised both by gsalt and by real Salt.
// "@ROOT@" is replaced with a per-case root directory and "@DIR@" with the
// config directory.
type treeCase struct {
	name    string
	role    string // master, minion, proxy
	proxyID string
	files   map[string]string
}

var treeCases = []treeCase{
	{name: "master defaults", role: "master", files: map[string]string{
		"master": "id: m1\nroot_dir: @ROOT@\n",
	}},
	{name: "master rich", role: "master", files: map[string]string{
		"master": `id: m2
root_dir: @ROOT@
interface: 127.0.0.1
publish_port: 14505
ret_port: "14506"
auto_accept: yes
open_mode: on
ipv6: off
zmq_filtering: True
sign_pub_messages: no
pki_dir: pki
cachedir: @ROOT@/cache
sock_dir: /run/salt/master
log_file: udp://localhost:514
key_logfile: file:///dev/log
autosign_file: /etc/salt/autosign.conf
autoreject_file: relative/reject
autosign_grains_dir: /etc/salt/autosign_grains
keep_jobs: 48
worker_threads: 1
peer: {.*: [test.ping]}
fileserver_backend: [git, roots, minion]
hash_type: SHA512
external_auth: {rest: {alice: [.*]}}
ssl: true
discovery: true
return: [mysql, redis]
environment: dev
nodegroups:
  - group1: 'L@a,b'
  - group2: ['G@os:Debian', and, 'E@web']
file_roots:
  base: [/srv/salt, "@ROOT@/roots/*"]
  dev: /not/a/list
pillar_roots: [not, a, mapping]
file_ignore_regex: '\.svn'
file_ignore_glob: '*.pyc'
max_minions: 100
gather_job_timeout: 15
timeout: 9
`,
		// One visible match only: Python's glob order is the directory's.
		"@ROOT@/roots/a/.keep": "", "@ROOT@/roots/.hidden/.keep": "",
	}},
	{name: "master.d merge order", role: "master", files: map[string]string{
		"master": `id: m3
root_dir: @ROOT@
publish_port: 1
nodegroups: {main: 'L@x'}
file_roots: {base: [/main]}
include: extra/*.conf
`,
		"master.d/10-a.conf":    "publish_port: 2\nfile_roots: {base: [/a], dev: [/d]}\nnodegroups: {a: 'L@a'}\nschedule: {job1: {function: test.ping, minutes: 5}}\n",
		"master.d/20-b.conf":    "publish_port: 3\nfile_roots: {base: [/b, /a]}\nnodegroups: {b: 'L@b'}\nschedule: {job1: {seconds: 10}, job2: {function: x}}\ninclude: ../nested/n.conf\n",
		"master.d/30-c.txt":     "publish_port: 99\n",
		"master.d/.hidden.conf": "publish_port: 98\n",
		"nested/n.conf":         "ret_port: 5555\n",
		"extra/x.conf":          "worker_threads: 7\nfile_roots: {extra: [/x]}\n",
	}},
	{name: "master log_dir and long sock_dir", role: "master", files: map[string]string{
		"master": "id: m4\nroot_dir: @ROOT@\nlog_dir: /var/log/custom\ncachedir: /c\nsock_dir: /a/very/long/socket/directory/path\n",
	}},
	{name: "master id from cache", role: "master", files: map[string]string{
		"master":                    "root_dir: @ROOT@\n",
		"@ROOT@/etc/salt/minion_id": "cached-host\n",
	}},
	{name: "minion defaults", role: "minion", files: map[string]string{
		"minion": "id: mn1\nroot_dir: @ROOT@\n",
	}},
	{name: "minion rich", role: "minion", files: map[string]string{
		"minion": `id: 123
root_dir: @ROOT@
master: [m1.example.com, m2.example.com]
master_type: failover
master_port: "4506"
publish_port: 14505
append_domain: example.com
append_minionid_config_dirs: [cachedir, pidfile, pki_dir]
grains: {roles: [web, db], rack: 7}
mine_functions: {network.ip_addrs: [eth0]}
mine_interval: 5
startup_states: highstate
acceptance_wait_time: 2.5
acceptance_wait_time_max: 30
random_reauth_delay: 0
auth_tries: 3
sign_pub_messages: yes
master_finger: 'ab:cd'
multiprocessing: off
log_file: logs/minion.log
log_level: DEBUG
ipc_write_buffer: 1000
hash_type: SHA1
open_mode: "yes"
fileserver_backend: [hg]
schedule: {j: {function: test.ping}}
`,
	}},
	{name: "minion.d and include", role: "minion", files: map[string]string{
		"minion":             "id: mn3\nroot_dir: @ROOT@\nmaster: salt1\ninclude: [extra.conf]\n",
		"minion.d/a.conf":    "master: salt2\ngrains: {a: 1, l: [1]}\n",
		"minion.d/b.conf":    "grains: {b: 2, l: [2, 1]}\n",
		"extra.conf":         "master_port: 4999\n",
		"minion.d/c.conf.no": "master: nope\n",
	}},
	{name: "minion default_include override", role: "minion", files: map[string]string{
		"minion":          "id: mn4\nroot_dir: @ROOT@\ndefault_include: conf.d/*.yml\n",
		"conf.d/x.yml":    "auth_timeout: 11\n",
		"minion.d/x.conf": "auth_timeout: 99\n",
	}},
	{name: "minion id from cache", role: "minion", files: map[string]string{
		"minion":                    "root_dir: @ROOT@\nminion_id_lowercase: true\n",
		"@ROOT@/etc/salt/minion_id": "Cached-Minion\nsecond line\n",
	}},
	{name: "proxy", role: "proxy", proxyID: "p1", files: map[string]string{
		"proxy":             "root_dir: @ROOT@\nmaster: salt\nlog_dir: plogs\n",
		"proxy.d/a.conf":    "auth_tries: 4\n",
		"proxy.d/p1/b.conf": "auth_tries: 5\nproxy: {proxytype: dummy}\n",
		"proxy.d/p2/b.conf": "auth_tries: 6\n",
	}},
}

// setupTree writes a case under a fresh temp dir and returns the config dir
// and the root dir.
func setupTree(t *testing.T, tc treeCase) (confDir, root string) {
	t.Helper()
	base := t.TempDir()
	confDir = filepath.Join(base, "conf")
	root = filepath.Join(base, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, content := range tc.files {
		content = strings.ReplaceAll(content, "@ROOT@", root)
		content = strings.ReplaceAll(content, "@DIR@", confDir)
		if strings.HasPrefix(name, "@ROOT@") {
			writeFiles(t, root, map[string]string{strings.TrimPrefix(name, "@ROOT@/"): content})
			continue
		}
		files[name] = content
	}
	writeFiles(t, confDir, files)
	return confDir, root
}

func loadTree(t *testing.T, tc treeCase, confDir string) (*Opts, error) {
	t.Helper()
	switch tc.role {
	case "master":
		m, err := LoadMaster(confDir)
		if err != nil {
			return nil, err
		}
		return m.Opts, nil
	case "minion":
		m, err := LoadMinion(confDir)
		if err != nil {
			return nil, err
		}
		return m.Opts, nil
	default:
		m, err := LoadProxy(confDir, tc.proxyID)
		if err != nil {
			return nil, err
		}
		return m.Opts, nil
	}
}

// TestLoadMatchesSalt compares the whole option map with real Salt's
// master_config/minion_config/proxy_config on the same files.
func TestLoadMatchesSalt(t *testing.T) {
	type prepared struct {
		tc      treeCase
		confDir string
	}
	var preps []prepared
	var reqs []saltReq
	for _, tc := range treeCases {
		confDir, _ := setupTree(t, tc)
		preps = append(preps, prepared{tc, confDir})
		reqs = append(reqs, saltReq{Kind: tc.role, Path: filepath.Join(confDir, tc.role), ProxyID: tc.proxyID})
	}
	// Salt resolves relative paths (log_dir, relative roots) against the
	// working directory: run both from the same place.
	res := runSalt(t, reqs)
	for i, p := range preps {
		t.Run(p.tc.name, func(t *testing.T) {
			if !res[i].OK {
				t.Fatalf("salt failed: %s", res[i].Err)
			}
			o, err := loadTree(t, p.tc, p.confDir)
			if err != nil {
				t.Fatalf("gsalt: %v", err)
			}
			// __cli is argv[0]'s name (python's "-c" vs the test binary).
			for _, d := range diffOpts(t, o.Snapshot(), res[i].Value, "__cli") {
				t.Error(d)
			}
		})
	}
}

func TestMasterTypedFields(t *testing.T) {
	confDir, root := setupTree(t, treeCases[1])
	m, err := LoadMaster(confDir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ID", m.ID, "m2"},
		{"Interface", m.Interface, "127.0.0.1"},
		{"PublishPort", m.PublishPort, 14505},
		{"RetPort", m.RetPort, 14506},
		{"AutoAccept", m.AutoAccept, true},
		{"OpenMode", m.OpenMode, true},
		{"IPv6", m.IPv6, false},
		{"ZMQFiltering", m.ZMQFiltering, true},
		{"SignPubMessages", m.SignPubMessages, false},
		{"PKIDir", m.PKIDir, filepath.Join(root, "pki")},
		{"CacheDir", m.CacheDir, filepath.Join(root, "cache")},
		{"SockDir", m.SockDir, filepath.Join(root, "run/salt/master")},
		{"TokenDir", m.TokenDir, filepath.Join(root, "cache/tokens")},
		{"LogFile", m.LogFile, "udp://localhost:514"},
		{"KeyLogfile", m.KeyLogfile, "file:///dev/log"},
		{"AutosignFile", m.AutosignFile, filepath.Join(root, "etc/salt/autosign.conf")},
		{"AutorejectFile", m.AutorejectFile, filepath.Join(root, "relative/reject")},
		{"AutosignTimeout", m.AutosignTimeout, 120},
		{"KeepJobsSeconds", m.KeepJobsSeconds, 48 * 3600},
		{"WorkerThreads", m.WorkerThreads, 3},
		{"HashType", m.HashType, "sha512"},
		{"MaxMinions", m.MaxMinions, 100},
		{"GatherJobTimeout", m.GatherJobTimeout, 15},
		{"Timeout", m.Timeout, 9},
		{"FileserverBackend", m.FileserverBackend, []string{"gitfs", "roots", "minionfs"}},
		{"FileRoots", m.FileRoots, map[string][]string{
			"base": {"/srv/salt", filepath.Join(root, "roots/a")},
			"dev":  {}}},
		{"PillarRoots", m.PillarRoots, map[string][]string{"base": {"/srv/salt"}}},
		{"Nodegroups", m.Nodegroups, map[string]any{"group1": "L@a,b", "group2": []any{"G@os:Debian", "and", "E@web"}}},
		{"keep_acl_in_token", m.Bool("keep_acl_in_token"), true},
		{"return", m.Str("return"), "mysql,redis"},
		{"saltenv", m.Str("saltenv"), "dev"},
		{"ssl", m.Map("ssl"), map[string]any{}},
		{"discovery", m.Map("discovery"), map[string]any{"port": 4520, "mapping": map[string]any{}}},
		{"file_ignore_glob", m.StrList("file_ignore_glob"), []string{"*.pyc"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestMasterDefaults(t *testing.T) {
	dir := t.TempDir() // no master file at all
	m, err := LoadMaster(dir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ConfFile", m.ConfFile, "/etc/salt/master"},
		{"PKIDir", m.PKIDir, "/etc/salt/pki/master"},
		{"CacheDir", m.CacheDir, "/var/cache/salt/master"},
		{"SockDir", m.SockDir, "/var/run/salt/master"},
		{"LogFile", m.LogFile, "/var/log/salt/master"},
		{"KeyLogfile", m.KeyLogfile, "/var/log/salt/key"},
		{"Pidfile", m.Pidfile, "/var/run/salt-master.pid"},
		{"PublishPort", m.PublishPort, 4505},
		{"RetPort", m.RetPort, 4506},
		{"Interface", m.Interface, "0.0.0.0"},
		{"WorkerThreads", m.WorkerThreads, 5},
		{"KeepJobsSeconds", m.KeepJobsSeconds, 86400},
		{"SignPubMessages", m.SignPubMessages, true},
		{"AutoAccept", m.AutoAccept, false},
		{"KeySize", m.KeySize, 2048},
		{"LogLevel", m.LogLevel, "warning"},
		{"FileRoots", m.FileRoots, map[string][]string{"base": {"/srv/salt", "/srv/spm/salt"}}},
		{"AutosignFile", m.AutosignFile, ""},
		{"RootDir", m.RootDir, "/"},
		{"PubHWM", m.PubHWM, 1000},
		{"RotateAESKey", m.RotateAESKey, true},
		{"ipc_write_buffer", func() any { v, _ := m.Get("ipc_write_buffer"); return v }(), 0},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if !strings.HasSuffix(m.ID, "_master") || m.ID == "_master" {
		t.Errorf("ID = %q, want <host>_master", m.ID)
	}
	if m.User == "" {
		t.Error("User is empty")
	}
}

func TestMinionTypedFields(t *testing.T) {
	confDir, root := setupTree(t, treeCases[6])
	m, err := LoadMinion(confDir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ID", m.ID, "123.example.com"},
		{"Master", m.Master, []string{"m1.example.com", "m2.example.com"}},
		{"MasterType", m.MasterType, "failover"},
		{"MasterPort", m.MasterPort, 4506},
		{"PublishPort", m.PublishPort, 14505},
		{"CacheDir", m.CacheDir, filepath.Join(root, "var/cache/salt/minion/123.example.com")},
		{"PKIDir", m.PKIDir, filepath.Join(root, "etc/salt/pki/minion/123.example.com")},
		{"Pidfile", m.Pidfile, filepath.Join(root, "var/run/salt/123.example.com/salt-minion.pid")},
		{"Grains", m.Grains, map[string]any{"roles": []any{"web", "db"}, "rack": 7}},
		{"MineFunctions", m.MineFunctions, map[string]any{"network.ip_addrs": []any{"eth0"}}},
		{"MineInterval", m.MineInterval, 5},
		{"StartupStates", m.StartupStates, "highstate"},
		{"AcceptanceWaitTime", m.AcceptanceWaitTime, 2.5},
		{"AcceptanceWaitTimeMax", m.AcceptanceWaitTimeMax, 30.0},
		{"RandomReauthDelay", m.RandomReauthDelay, 0},
		{"AuthTries", m.AuthTries, 3},
		{"AuthTimeout", m.AuthTimeout, 5},
		{"ReturnRetryTries", m.ReturnRetryTries, 3},
		{"SignPubMessages", m.SignPubMessages, true},
		{"MasterFinger", m.MasterFinger, "ab:cd"},
		{"Multiprocessing", m.Multiprocessing, false},
		{"LogFile", m.LogFile, filepath.Join(root, "logs/minion.log")},
		{"LogLevel", m.LogLevel, "DEBUG"},
		{"HashType", m.HashType, "sha1"},
		{"OpenMode", m.OpenMode, false},
		{"ipc_write_buffer", func() any { v, _ := m.Get("ipc_write_buffer"); return v }(), 1000},
		{"fileserver_backend", m.StrList("fileserver_backend"), []string{"hgfs"}},
		{"Schedule", m.Schedule, map[string]any{"j": map[string]any{"function": "test.ping"}}},
		{"Beacons", m.Beacons, map[string]any{}},
		{"utils_dirs", m.StrList("utils_dirs"), []string{"/var/cache/salt/minion/extmods/utils"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestMinionDefaults(t *testing.T) {
	confDir, root := setupTree(t, treeCases[5])
	m, err := LoadMinion(confDir)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ID", m.ID, "mn1"},
		{"Master", m.Master, []string{"salt"}},
		{"MasterPort", m.MasterPort, 4506},
		{"PublishPort", m.PublishPort, 0},
		{"PKIDir", m.PKIDir, filepath.Join(root, "etc/salt/pki/minion")},
		{"CacheDir", m.CacheDir, filepath.Join(root, "var/cache/salt/minion")},
		{"SockDir", m.SockDir, filepath.Join(root, "var/run/salt/minion")},
		{"LogFile", m.LogFile, filepath.Join(root, "var/log/salt/minion")},
		{"Pidfile", m.Pidfile, filepath.Join(root, "var/run/salt-minion.pid")},
		{"AcceptanceWaitTime", m.AcceptanceWaitTime, 10.0},
		{"AcceptanceWaitTimeMax", m.AcceptanceWaitTimeMax, 0.0},
		{"RandomReauthDelay", m.RandomReauthDelay, 10},
		{"AuthTries", m.AuthTries, 7},
		{"AuthTimeout", m.AuthTimeout, 5},
		{"ReturnRetryTries", m.ReturnRetryTries, 3},
		{"MineInterval", m.MineInterval, 60},
		{"MineFunctions", m.MineFunctions, map[string]any(nil)},
		{"Multiprocessing", m.Multiprocessing, true},
		{"SignPubMessages", m.SignPubMessages, false},
		{"ZMQFiltering", m.ZMQFiltering, false},
		{"MasterType", m.MasterType, "str"},
		{"StartupStates", m.StartupStates, ""},
		{"MinionIDCaching", m.MinionIDCaching, true},
		{"AutoAccept", m.AutoAccept, true},
		{"FileClient", m.FileClient, "remote"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestIncludeMergeOrder(t *testing.T) {
	confDir, _ := setupTree(t, treeCases[2])
	m, err := LoadMaster(confDir)
	if err != nil {
		t.Fatal(err)
	}
	if m.PublishPort != 3 {
		t.Errorf("PublishPort = %d, want 3 (last master.d file wins; .txt and hidden files ignored)", m.PublishPort)
	}
	if m.RetPort != 5555 {
		t.Errorf("RetPort = %d, want 5555 from the nested include", m.RetPort)
	}
	if m.WorkerThreads != 7 {
		t.Errorf("WorkerThreads = %d, want 7 from include:", m.WorkerThreads)
	}
	// master.d replaces the main file's top-level keys; master.d files merge
	// among themselves (lists concatenated without duplicates); include:
	// replaces again at the top level.
	wantRoots := map[string][]string{"extra": {"/x"}}
	if !reflect.DeepEqual(m.FileRoots, wantRoots) {
		t.Errorf("FileRoots = %#v, want %#v", m.FileRoots, wantRoots)
	}
	wantNG := map[string]any{"a": "L@a", "b": "L@b"}
	if !reflect.DeepEqual(m.Nodegroups, wantNG) {
		t.Errorf("Nodegroups = %#v, want %#v", m.Nodegroups, wantNG)
	}
	wantSched := map[string]any{"job1": map[string]any{"seconds": 10}, "job2": map[string]any{"function": "x"}}
	if got := m.Map("schedule"); !reflect.DeepEqual(got, wantSched) {
		t.Errorf("schedule = %#v, want %#v (jobs replaced whole)", got, wantSched)
	}
}

func TestDefaultIncludeOverride(t *testing.T) {
	confDir, _ := setupTree(t, treeCases[8])
	m, err := LoadMinion(confDir)
	if err != nil {
		t.Fatal(err)
	}
	if m.AuthTimeout != 11 {
		t.Errorf("AuthTimeout = %d, want 11 from conf.d/*.yml", m.AuthTimeout)
	}
}

func TestRootDirPrefixing(t *testing.T) {
	tests := []struct {
		root, path, want string
	}{
		{"/", "/var/cache/salt", "/var/cache/salt"},
		{"/srv/r", "/var/cache/salt", "/srv/r/var/cache/salt"},
		{"/srv/r", "/srv/r/var/cache", "/srv/r/var/cache"},
		{"/srv/r/", "/srv/r/var/cache", "/srv/r/var/cache"},
		{"/srv/r", "cache", "/srv/r/cache"},
		{"/srv/r", "./a/../b", "/srv/r/b"},
		{"/srv/r", "/srv/r", "/srv/r/srv/r"}, // Salt quirk: the root itself is re-rooted
		{"/srv/r", "", "/srv/r"},
		{"/srv/r", "/srv/rx/y", "/srv/r/srv/rx/y"},
	}
	for _, tc := range tests {
		opts := map[string]any{"root_dir": tc.root, "p": tc.path, "n": 5}
		prependRootDir(opts, []string{"p", "n", "missing"})
		if opts["p"] != tc.want {
			t.Errorf("root %q path %q: got %q, want %q", tc.root, tc.path, opts["p"], tc.want)
		}
		if opts["n"] != 5 {
			t.Errorf("non-string option changed: %#v", opts["n"])
		}
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	tests := []struct {
		role, file, content, want string
	}{
		{"master", "master", "publish_port: abc\n", `config: master: publish_port: want an integer, got "abc"`},
		{"master", "master", "worker_threads: 1.5\n", `config: master: worker_threads: want an integer, got 1.5`},
		{"master", "master", "ping_on_rotate: \"yes\"\n", `config: master: ping_on_rotate: want a boolean, got "yes"`},
		{"master", "master", "nodegroups: 5\n", `config: master: nodegroups: want a list or a mapping, got 5`},
		{"master", "master", "publish_port:\n", `config: master: publish_port: want an integer, got None`},
		{"master", "master", "timeout: [1]\n", `config: master: timeout: want an integer, got [1]`},
		{"master", "master.d/x.conf", "interface: [a]\n", `config: master: interface: want a string, got ["a"]`},
		{"minion", "minion", "id: x\nmaster_port: salt\n", `config: minion: master_port: want an integer, got "salt"`},
		{"minion", "minion", "id: x\nacceptance_wait_time: soon\n", `config: minion: acceptance_wait_time: want a number, got "soon"`},
		{"minion", "minion", "id: x\ngrains: [a]\n", `config: minion: grains: want a mapping, got ["a"]`},
		{"minion", "minion", "id: x\nmaster: {a: 1}\n", `config: minion: master: want a string or a list, got {"a": 1}`},
		{"proxy", "proxy", "multiprocessing: maybe\n", `config: proxy: multiprocessing: want a boolean, got "maybe"`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{tc.file: "root_dir: " + dir + "\n" + tc.content})
			var err error
			switch tc.role {
			case "master":
				_, err = LoadMaster(dir)
			case "minion":
				_, err = LoadMinion(dir)
			default:
				_, err = LoadProxy(dir, "p")
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant  %s", err, tc.want)
			}
			if !errors.Is(err, ErrInvalidValue) {
				t.Errorf("errors.Is(err, ErrInvalidValue) = false")
			}
			var ve *ValueError
			if !errors.As(err, &ve) || ve.Role != tc.role {
				t.Errorf("not a *ValueError with role %q: %#v", tc.role, err)
			}
		})
	}
}

func TestLaxKeysOnlyWarn(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(prev)
	dir := t.TempDir()
	// state_verbose is typed bool by Salt but not read by gsalt's typed
	// fields: like Salt, only a warning.
	writeFiles(t, dir, map[string]string{"master": "id: m\nroot_dir: " + dir + "\nstate_verbose: 3\nmy_custom_option: 1\n"})
	m, err := LoadMaster(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Get("state_verbose"); v != 3 {
		t.Errorf("state_verbose = %#v", v)
	}
	if v, _ := m.Get("my_custom_option"); v != 1 {
		t.Errorf("unknown option not kept: %#v", v)
	}
	out := logs.String()
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "unknown option") || !strings.Contains(out, "key=my_custom_option") {
		t.Errorf("no debug log for the unknown option:\n%s", out)
	}
	for _, known := range []string{"key=id ", "key=root_dir", "key=state_verbose want"} {
		if strings.Contains(out, "unknown option role=master "+known) {
			t.Errorf("known option logged as unknown: %s", known)
		}
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "key=state_verbose") {
		t.Errorf("no type warning for state_verbose:\n%s", out)
	}
}

func TestBadFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings
	}{
		{"syntax", map[string]string{"master": "a: 1\nb: [1, 2\nc: 3\n"}, []string{"/master", "line"}},
		{"not a mapping", map[string]string{"master": "- a\n- b\n"}, []string{"/master", "mapping"}},
		{"bad master.d", map[string]string{"master": "id: x\n", "master.d/b.conf": "x: 1\nx: 2\n"}, []string{"master.d/b.conf", "line 2"}},
		{"include loop", map[string]string{"master": "id: x\ninclude: a.conf\n", "a.conf": "include: a.conf\n"}, []string{"include nesting"}},
		{"bad discovery", map[string]string{"master": "id: x\ndiscovery: {nope: 1}\n"}, []string{"nope"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			_, err := LoadMaster(dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not mention %q", err, w)
				}
			}
			if tc.name != "include loop" && !errors.Is(err, ErrConfigFile) {
				t.Errorf("errors.Is(err, ErrConfigFile) = false for %v", err)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			// root reads anything: use a directory in place of the file.
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "master"), 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := LoadMaster(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "master")) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"master": "id: x\n"})
		if err := os.Chmod(filepath.Join(dir, "master"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadMaster(dir); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestMinionIDResolution(t *testing.T) {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	tests := []struct {
		name      string
		config    string
		cache     *string // content of <root>/etc/salt/minion_id, nil: absent
		wantID    string
		wantCache *string // expected cache content afterwards
	}{
		{"configured", "id: web1\n", nil, "web1", nil},
		{"numeric", "id: 42\n", nil, "42", nil},
		{"cached", "", ptr("\ufeffcachedid \n"), "cachedid", ptr("\ufeffcachedid \n")},
		{"cached localhost ignored", "", ptr("localhost\n"), host, ptr(host)},
		{"hostname cached", "", nil, host, ptr(host)},
		{"no caching", "minion_id_caching: false\n", ptr("cachedid"), host, ptr("cachedid")},
		{"no caching no write", "minion_id_caching: no\n", nil, host, nil},
		{"lowercase", "minion_id_lowercase: true\n", ptr("MiXed"), "MiXed", ptr("MiXed")},
		{"append_domain", "append_domain: corp\n", ptr("box"), "box.corp", ptr("box")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "root")
			files := map[string]string{"conf/minion": "root_dir: " + root + "\n" + tc.config}
			if tc.cache != nil {
				files["root/etc/salt/minion_id"] = *tc.cache
			}
			writeFiles(t, dir, files)
			m, err := LoadMinion(filepath.Join(dir, "conf"))
			if err != nil {
				t.Fatal(err)
			}
			if m.ID != tc.wantID {
				t.Errorf("ID = %q, want %q", m.ID, tc.wantID)
			}
			data, err := os.ReadFile(MinionIDCachePath(root))
			switch {
			case tc.wantCache == nil && err == nil:
				t.Errorf("cache file written: %q", data)
			case tc.wantCache != nil && (err != nil || string(data) != *tc.wantCache):
				t.Errorf("cache = %q (%v), want %q", data, err, *tc.wantCache)
			}
			if _, err := os.Stat(filepath.Join(dir, "conf", "minion_id")); err == nil {
				t.Error("minion_id written to the config dir; Salt uses <root_dir>/etc/salt")
			}
		})
	}
	t.Run("id_function unsupported", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"minion": "root_dir: " + dir + "\nid_function: {mod.fun: {}}\n"})
		if _, err := LoadMinion(dir); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("err = %v, want ErrUnsupported", err)
		}
	})
}

func ptr(s string) *string { return &s }

func TestProxy(t *testing.T) {
	confDir, root := setupTree(t, treeCases[10])
	p, err := LoadProxy(confDir, "p1")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"ID", p.ID, "p1"},
		{"ProxyID", p.ProxyID, "p1"},
		{"Role", p.Role(), "proxy"},
		{"AuthTries", p.AuthTries, 5},
		{"CacheDir", p.CacheDir, filepath.Join(root, "var/cache/salt/proxy/p1")},
		{"PKIDir", p.PKIDir, filepath.Join(root, "etc/salt/pki/proxy")},
		{"SockDir", p.SockDir, filepath.Join(root, "var/run/salt/proxy")},
		{"Pidfile", p.Pidfile, filepath.Join(root, "var/run/salt/p1/salt-minion.pid")},
		{"default_include", p.Str("default_include"), "proxy.d/p1/*.conf"},
		{"proxy", p.Map("proxy"), map[string]any{"proxytype": "dummy"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if _, err := os.Stat(MinionIDCachePath(root)); err == nil {
		t.Error("proxy cached its id")
	}
	if _, err := LoadProxy(confDir, ""); !errors.Is(err, ErrNoProxyID) {
		t.Errorf("empty proxy id: err = %v", err)
	}
}

func TestOptsAccessors(t *testing.T) {
	o := NewOpts(RoleMaster, map[string]any{
		"s": "x", "i": 5, "istr": " 12 ", "f": 1.5, "b": true, "no": "no", "zero": 0,
		"l": []any{"a", 1, true, []any{"nested"}}, "m": map[string]any{"k": "v"}, "nil": nil,
	})
	if o.Str("s") != "x" || o.Str("i") != "5" || o.Str("b") != "True" || o.Str("f") != "1.5" || o.Str("nil") != "" || o.Str("absent") != "" {
		t.Error("Str conversions wrong")
	}
	if n, err := o.Int("i"); n != 5 || err != nil {
		t.Errorf("Int(i) = %d, %v", n, err)
	}
	if n, err := o.Int("istr"); n != 12 || err != nil {
		t.Errorf("Int(istr) = %d, %v", n, err)
	}
	if _, err := o.Int("f"); err == nil || err.Error() != "config: master: f: want an integer, got 1.5" {
		t.Errorf("Int(f) err = %v", err)
	}
	if _, err := o.Int("b"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Int(b) err = %v", err)
	}
	if _, err := o.Int("absent"); !errors.Is(err, ErrNotSet) {
		t.Errorf("Int(absent) err = %v", err)
	}
	if f, err := o.Float("i"); f != 5 || err != nil {
		t.Errorf("Float(i) = %v, %v", f, err)
	}
	if !o.Bool("b") || !o.Bool("no") || o.Bool("zero") || o.Bool("nil") || o.Bool("absent") || !o.Bool("m") {
		t.Error("Bool truthiness wrong")
	}
	if got := o.StrList("l"); !reflect.DeepEqual(got, []string{"a", "1", "True"}) {
		t.Errorf("StrList(l) = %#v", got)
	}
	if got := o.StrList("s"); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("StrList(s) = %#v", got)
	}
	if o.Map("m")["k"] != "v" || o.Map("s") != nil {
		t.Error("Map wrong")
	}
	o.Set("new", 1)
	if v, ok := o.Get("new"); !ok || v != 1 {
		t.Error("Set/Get wrong")
	}
	o.Set("publish_port", "abc")
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "publish_port") {
		t.Errorf("Validate after Set: %v", err)
	}
}
