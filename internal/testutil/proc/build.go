package proc

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// EnvBinDir names the folder Build keeps the commands it builds in,
// shared by the test binaries of every package (default: gsalt-testbin
// in os.TempDir()).
const EnvBinDir = "GSALT_TEST_BINDIR"

// RaceBuild reports whether the running test binary was built with
// -race; Build then builds the commands with -race too.
func RaceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// BuildOptions say how BuildWith builds.
type BuildOptions struct {
	// Race adds -race.
	Race bool
	// Flags are further go build flags ("-tags", "libvirt_dlopen",
	// "-trimpath", "-ldflags=-s -w").
	Flags []string
	// Env are further environment variables of go build
	// ("CGO_ENABLED=0").
	Env []string
}

// builds holds what BuildWith built in this test binary, by options and
// packages.
var builds struct {
	mu   sync.Mutex
	dirs map[string]*built
}

type built struct {
	once sync.Once
	dir  string
	err  error
}

// Build builds the given packages (import paths relative to the module
// root, such as "./cmd/gsalt-master"; "./cmd/..." when none are given),
// with -race when the test binary has it, and returns the folder holding
// the commands. See BuildWith.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	return BuildWith(t, BuildOptions{Race: RaceBuild()}, pkgs...)
}

// BuildWith builds the given packages ("./cmd/..." when none are given)
// the way o says and returns the folder holding the commands.
//
// The commands go to one folder per checkout and build configuration
// (options, Go version and the environment go build reads), shared by
// the test binaries of all packages and kept between runs: go build
// relinks only the commands whose inputs changed and leaves an up-to-date
// one alone, so the second package that needs gsalt-master costs a check,
// not a link (a -race link of a command takes seconds). A lock file
// serialises the builds of concurrent test binaries; a relinked command
// is renamed into place, so a daemon running the old one is not
// disturbed. A command name some other package of the checkout already
// uses in the shared folder gets a folder of its own.
func BuildWith(t testing.TB, o BuildOptions, pkgs ...string) string {
	t.Helper()
	if len(pkgs) == 0 {
		pkgs = []string{"./cmd/..."}
	}
	b := buildOnce(o, pkgs)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir
}

// Prebuild starts BuildWith's build of pkgs in the background (from
// TestMain, for a package whose longest test needs commands that take
// long to build); the test's BuildWith call then waits for it and reports
// its error.
func Prebuild(o BuildOptions, pkgs ...string) {
	if len(pkgs) == 0 {
		pkgs = []string{"./cmd/..."}
	}
	go buildOnce(o, pkgs)
}

// buildOnce builds pkgs as o says, once per test binary, and returns the
// result.
func buildOnce(o BuildOptions, pkgs []string) *built {
	conf := buildConfig(o)
	key := conf + "\x00" + strings.Join(pkgs, " ")
	builds.mu.Lock()
	if builds.dirs == nil {
		builds.dirs = map[string]*built{}
	}
	b := builds.dirs[key]
	if b == nil {
		b = &built{}
		builds.dirs[key] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() { b.dir, b.err = buildShared(o, conf, pkgs) })
	return b
}

// buildConfig is the text that names a build configuration: what changes
// the commands go build makes other than their sources.
func buildConfig(o BuildOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "root=%s\ngo=%s\nrace=%v\n", RepoRoot(), runtime.Version(), o.Race)
	for _, f := range o.Flags {
		fmt.Fprintf(&b, "flag=%s\n", f)
	}
	env := slices.Clone(o.Env)
	for _, k := range []string{"GOFLAGS", "CGO_ENABLED", "CC", "CGO_CFLAGS", "CGO_LDFLAGS", "GOEXPERIMENT", "GOOS", "GOARCH", "GOAMD64", "GOTOOLCHAIN"} {
		env = append(env, k+"="+os.Getenv(k)+"\x01")
	}
	for _, e := range env {
		fmt.Fprintf(&b, "env=%s\n", e)
	}
	return b.String()
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// buildShared builds pkgs into the shared folder of conf (or, when a
// command name there belongs to another package, into a folder of their
// own) under the lock and returns the folder.
func buildShared(o BuildOptions, conf string, pkgs []string) (string, error) {
	base := os.Getenv(EnvBinDir)
	if base == "" {
		base = filepath.Join(os.TempDir(), "gsalt-testbin")
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("proc: build folder: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(base, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("proc: build lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("proc: build lock: %w", err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()

	mains, err := mainPackages(o, pkgs)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, hashOf(conf))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("proc: build folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".config"), []byte(conf), 0o644); err != nil {
		return "", fmt.Errorf("proc: build folder: %w", err)
	}
	owners, err := readOwners(dir)
	if err != nil {
		return "", err
	}
	for name, path := range mains {
		if p, ok := owners[name]; ok && p != path {
			// Two packages of one name: this set gets its own folder.
			dir = filepath.Join(base, hashOf(conf+"\x00"+strings.Join(pkgs, " ")))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", fmt.Errorf("proc: build folder: %w", err)
			}
			owners = nil
			break
		}
	}
	args := []string{"build"}
	if o.Race {
		args = append(args, "-race")
	}
	args = append(args, o.Flags...)
	args = append(args, "-o", dir+string(filepath.Separator))
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), o.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if owners != nil {
		for name, path := range mains {
			owners[name] = path
		}
		if err := writeOwners(dir, owners); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// mainPackages maps the command names pkgs build to their import paths.
func mainPackages(o BuildOptions, pkgs []string) (map[string]string, error) {
	args := append([]string{"list"}, o.Flags...)
	args = append(args, "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}")
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), o.Env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr)
	}
	m := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		m[filepath.Base(line)] = line
	}
	return m, nil
}

const ownersFile = ".owners"

// readOwners reads the command name to import path lines of dir.
func readOwners(dir string) (map[string]string, error) {
	m := map[string]string{}
	f, err := os.Open(filepath.Join(dir, ownersFile))
	if os.IsNotExist(err) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("proc: build folder: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, path, ok := strings.Cut(sc.Text(), " "); ok {
			m[name] = path
		}
	}
	return m, sc.Err()
}

func writeOwners(dir string, m map[string]string) error {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s %s\n", name, m[name])
	}
	tmp := filepath.Join(dir, ownersFile+".tmp")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("proc: build folder: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ownersFile)); err != nil {
		return fmt.Errorf("proc: build folder: %w", err)
	}
	return nil
}

// Main runs the tests; call it from TestMain:
// func TestMain(m *testing.M) { proc.Main(m) }. The commands Build made
// stay in the shared folder for the next test binary.
func Main(m *testing.M) {
	os.Exit(m.Run())
}

// MainParallel is Main for a package whose parallel tests mostly wait on
// real processes (daemons, guests, failover intervals) rather than use
// the CPU: unless the command line sets -test.parallel, up to n of them
// run at once instead of GOMAXPROCS (go test's default), so their waits
// overlap.
func MainParallel(m *testing.M, n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && n > runtime.GOMAXPROCS(0) {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			fmt.Fprintln(os.Stderr, "proc:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
