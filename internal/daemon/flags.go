package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/gsalt/gsalt/version"
)

// Flags are Salt's daemon options shared by gsalt-master, gsalt-minion and
// gsalt-proxy (salt.utils.parsers DaemonMixIn, PidfileMixin,
// RunUserMixin, LogLevelMixIn).
type Flags struct {
	// Daemon is -d/--daemon: run in the background.
	Daemon bool
	// PidFile is --pid-file (overrides the pidfile option).
	PidFile string
	// User is -u/--user: the user to run as.
	User string
	// LogFile and LogFileLevel are --log-file and --log-file-level.
	LogFile, LogFileLevel string
	// Version is -V/--version.
	Version bool
	// MetricsPort and MetricsHost are --metrics-port and --metrics-host
	// (override metrics_port and metrics_host; see internal/health).
	MetricsPort int
	MetricsHost string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.BoolVarP(&f.Daemon, "daemon", "d", false, "run in the background (the process detaches; use with --pid-file or the pidfile option)")
	fs.StringVar(&f.PidFile, "pid-file", "", "write the pid to this file (default: the pidfile option)")
	fs.StringVarP(&f.User, "user", "u", "", "run as this user (needs root unless it is the current user)")
	fs.StringVar(&f.LogFile, "log-file", "", "log file path or syslog URL (default: the log_file option)")
	fs.StringVar(&f.LogFileLevel, "log-file-level", "", "log file level (default: the log_level_logfile option)")
	fs.BoolVarP(&f.Version, "version", "V", false, "show the versions and exit")
	fs.IntVar(&f.MetricsPort, "metrics-port", 0, "serve /healthz, /readyz and /metrics on this port (default: the metrics_port option; off when unset)")
	fs.StringVar(&f.MetricsHost, "metrics-host", "", "address of the metrics listener (default: the metrics_host option)")
}

// Apply puts --log-file and --log-file-level over the configuration's.
func (f *Flags) Apply(l *Logging) {
	if f.LogFile != "" {
		l.File = f.LogFile
	}
	if f.LogFileLevel != "" {
		l.FileLevel = f.LogFileLevel
	}
}

// VersionReport is what --version prints: gsalt's version, the Salt
// version it speaks, Go, and the libraries it was built with.
func VersionReport(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (Salt %s %s)\n", name, version.Gsalt, version.Salt, version.Codename)
	fmt.Fprintf(&b, "Go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok && len(bi.Deps) > 0 {
		b.WriteString("Libraries:\n")
		for _, d := range bi.Deps {
			v := d.Version
			if d.Replace != nil {
				v += " => " + d.Replace.Path + " " + d.Replace.Version
			}
			fmt.Fprintf(&b, "  %s %s\n", d.Path, v)
		}
	}
	return b.String()
}

// daemonEnv marks the detached child of Daemonize.
const daemonEnv = "GSALT_DAEMONIZED"

// Daemonize starts this program again detached from the terminal (a new
// session, standard streams on /dev/null) and reports true in the parent,
// which should then exit 0; it reports false in the child and when f.Daemon
// is not set.
func (f *Flags) Daemonize() (parent bool, err error) {
	if !f.Daemon || os.Getenv(daemonEnv) == "1" {
		return false, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("daemon: %w", err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("daemon: %w", err)
	}
	defer null.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), daemonEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("daemon: %w", err)
	}
	return true, cmd.Process.Release()
}

// SwitchUser runs the process as name (-u/--user or the user option) when
// it is started as root and name is another user; as another user it only
// checks that name is the current one.
func SwitchUser(name string) error {
	if name == "" {
		return nil
	}
	cur, err := user.Current()
	if err == nil && cur.Username == name {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %s is not available: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if os.Geteuid() != 0 {
		if os.Geteuid() == uid {
			return nil
		}
		return fmt.Errorf("user %s is not available: not running as root", name)
	}
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return fmt.Errorf("switch to user %s: %w", name, err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("switch to user %s: %w", name, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("switch to user %s: %w", name, err)
	}
	return nil
}

// Notify sends a systemd notification (sd_notify: "READY=1",
// "STOPPING=1", "WATCHDOG=1", ...) to $NOTIFY_SOCKET; without it, it does
// nothing.
func Notify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if strings.HasPrefix(path, "@") {
		path = "\x00" + path[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// Watchdog sends WATCHDOG=1 every half of $WATCHDOG_USEC until ctx ends
// (systemd's WatchdogSec); without it, it returns at once.
func Watchdog(ctx context.Context) {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return
	}
	go func() {
		t := time.NewTicker(time.Duration(usec) * time.Microsecond / 2)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = Notify("WATCHDOG=1")
			}
		}
	}()
}

// CheckConfigDir refuses a -c folder that does not exist: starting with
// Salt's defaults would write to /etc/salt, /var/cache/salt and /run/salt.
func CheckConfigDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("the configuration directory %s cannot be used: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the configuration directory %s is not a directory", dir)
	}
	return nil
}
