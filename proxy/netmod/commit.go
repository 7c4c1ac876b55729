package netmod

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/internal/pytime"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// Scheduled commits and reverts, as Salt's napalm_network module builds
// them on the minion scheduler: a commit_in/commit_at discards the change
// now and schedules "__napalm_commit_<jid>", a net.load_config of the
// saved candidate with commit_jid; a revert_in/revert_at commits now and
// schedules a net.load_config replace of the running config saved before
// the commit, which net.confirm_commit cancels. On junos the device's own
// confirmed commit is used instead, as in Salt.

// ErrTime is returned for a commit_in/commit_at/revert_in/revert_at value
// that cannot be read.
var ErrTime = errors.New("netmod: bad time")

// commitJobPrefix names the scheduled job of a commit ID.
const commitJobPrefix = "__napalm_commit_"

// timeIn reads Salt's time_in: an integer number of minutes, or text
// "H:MM", "1h30m", "30m", "30" (minutes). gsalt also reads "<n>s" as
// seconds, which Salt refuses.
func timeIn(v any) (time.Duration, error) {
	if n, ok := payload.AsInt(v); ok {
		if n <= 0 {
			return 0, fmt.Errorf("%w: %v is not a positive number of minutes", ErrTime, v)
		}
		return time.Duration(n) * time.Minute, nil
	}
	s := strings.ToLower(strings.TrimSpace(payload.Text(v)))
	if strings.HasSuffix(s, "s") && !strings.ContainsAny(s, "hm:") {
		n, err := strconv.Atoi(strings.TrimSuffix(s, "s"))
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%w: %q", ErrTime, s)
		}
		return time.Duration(n) * time.Second, nil
	}
	s = strings.TrimSuffix(strings.ReplaceAll(s, "h", ":"), "m")
	hours, minutes := "0", s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		hours, minutes = s[:i], s[i+1:]
	}
	if minutes == "" {
		minutes = "0"
	}
	h, err1 := strconv.Atoi(hours)
	m, err2 := strconv.Atoi(minutes)
	if err1 != nil || err2 != nil || h < 0 || m < 0 || h*60+m == 0 {
		return 0, fmt.Errorf("%w: %q is not a time span such as 30, 30m, 1h30m or 1:30 (minutes)", ErrTime, payload.Text(v))
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute, nil
}

// timeAtFormats are the time-of-day forms Salt documents for time_at.
var timeAtFormats = []string{"%H:%M", "%H%M", "%Hh%M", "%I%p", "%I:%M%p", "%I:%M %p"}

// timeAt reads Salt's time_at: a Unix timestamp, a date and time
// ("2026-11-22T18:30:00", "2026-11-22 18:30"), or a time of day ("18:30",
// "1830", "18h30", "6pm", "6:30pm", "6:30 pm") taken as its next
// occurrence. (Salt's own parser turns a time of day into a date in 1900,
// so such a commit never runs; gsalt schedules it.)
func timeAt(v any, now time.Time) (time.Time, error) {
	if f, ok := v.(float64); ok {
		return time.Unix(int64(f), 0).In(now.Location()), nil
	}
	if n, ok := v.(int64); ok {
		return time.Unix(n, 0).In(now.Location()), nil
	}
	s := strings.TrimSpace(payload.Text(v))
	for _, f := range timeAtFormats {
		t, err := pytime.Strptime(s, f, now.Location())
		if err != nil {
			continue
		}
		at := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		return at, nil
	}
	if strings.Count(s, "-") >= 2 {
		if t, err := pytime.Parse(s, now); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %s does not match any of the accepted formats: %s", ErrTime, s, strings.Join(timeAtFormats, ", "))
}

// whenFrom is get_timestamp_at: time_in wins over time_at.
func whenFrom(in, at any, now time.Time) (time.Time, error) {
	if payload.Truthy(in) {
		d, err := timeIn(in)
		if err != nil {
			return time.Time{}, err
		}
		return now.Add(d), nil
	}
	return timeAt(at, now)
}

// currentJID is the job's jid, or a new one as Salt makes it.
func currentJID(c *modules.Call) string {
	if c.Pub != nil && c.Pub.Str("jid") != "" {
		return c.Pub.Str("jid")
	}
	if v := c.Args.Get("__pub_jid"); v != nil {
		return payload.Text(v)
	}
	return saltjid.New()
}

// commitFile writes text to a file the scheduled net.load_config reads,
// under the minion's cachedir.
func commitFile(c *modules.Call, jid, kind, text string) (string, error) {
	dir := os.TempDir()
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get("cachedir"); ok && payload.Text(v) != "" {
			dir = filepath.Join(payload.Text(v), "napalm")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, kind+"_"+filepath.Base(jid)+".cfg")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// callFn runs another execution function of the minion (Salt's
// __salt__[...]); a missing function or its error is an error.
func callFn(ctx context.Context, c *modules.Call, fun string, args ...any) (any, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("'%s' is not available: %w", fun, modules.ErrNotAvailable)
	}
	if _, ok := c.Env.Registry.Lookup(fun); !ok {
		return nil, fmt.Errorf("'%s' is not available: %w", fun, modules.ErrNotAvailable)
	}
	res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, fun, args, nil)
	if res.Retcode != 0 && !res.Success {
		if _, isMap := res.Return.(*payload.Map); !isMap {
			return nil, fmt.Errorf("%s: %v", fun, res.Return)
		}
	}
	return res.Return, nil
}

// scheduleAvailable tells whether the minion has the schedule module.
func scheduleAvailable(c *modules.Call) error {
	for _, fun := range []string{"schedule.add", "schedule.save", "schedule.delete"} {
		if c.Env == nil || c.Env.Registry == nil {
			return fmt.Errorf("'%s' is not available: %w", fun, modules.ErrNotAvailable)
		}
		if _, ok := c.Env.Registry.Lookup(fun); !ok {
			return fmt.Errorf("'%s' is not available: %w", fun, modules.ErrNotAvailable)
		}
	}
	return nil
}

// scheduleCommitJob adds and saves the once job that loads file at t.
func scheduleCommitJob(ctx context.Context, c *modules.Call, jid, file string, replace bool, t time.Time) error {
	kw := payload.NewMap("__kwarg__", true, "function", "net.load_config",
		"job_kwargs", payload.NewMap("filename", file, "commit_jid", jid, "replace", replace),
		"once", pytime.Strftime(t, "%Y-%m-%dT%H:%M:%S"))
	r, err := callFn(ctx, c, "schedule.add", commitJobPrefix+jid, kw)
	if err != nil {
		return err
	}
	if rm, ok := r.(*payload.Map); ok && !rm.Bool("result") {
		return fmt.Errorf("schedule.add: %s", rm.Str("comment"))
	}
	if _, err := callFn(ctx, c, "schedule.save"); err != nil {
		return err
	}
	return nil
}

// scheduledCommit is the commit_in/commit_at branch of _config_logic:
// schedule the commit, discard the change now.
func scheduledCommit(ctx context.Context, c *modules.Call, n *proxymod.Napalm, loaded *payload.Map, o cfgOpts, replace bool) *payload.Map {
	at, err := whenFrom(o.commitIn, o.commitAt, time.Now())
	if err == nil {
		err = scheduleAvailable(c)
	}
	if err == nil {
		jid := currentJID(c)
		var file string
		if file, err = commitFile(c, jid, "commit", payload.Text(o.loadedConfig)); err == nil {
			if err = scheduleCommitJob(ctx, c, jid, file, replace, at); err == nil {
				when := pytime.Strftime(at, "%Y-%m-%dT%H:%M:%S")
				if d := safeDiscard(ctx, c, n, loaded); !d.Bool("result") {
					appendComment(loaded, fmt.Sprintf("Scheduled the job to be executed at %s, but was unable to discard the config: \n", when))
					return loaded
				}
				loaded.Set("comment", fmt.Sprintf("Changes discarded for now, and scheduled commit at: %s.\nThe commit ID is: %s.\nTo discard this commit, you can execute: \n\nsalt %s net.cancel_commit %s",
					when, jid, c.Env.ID, jid))
				loaded.Set("commit_id", jid)
				return loaded
			}
		}
	}
	loaded.Set("result", false).Set("comment", "Unable to schedule the commit: "+err.Error())
	c.Retcode = 1
	safeDiscard(ctx, c, n, loaded)
	return loaded
}

// revertableCommit is the revert_in/revert_at branch: commit now, and
// revert at the time unless net.confirm_commit is called.
func revertableCommit(ctx context.Context, c *modules.Call, n *proxymod.Napalm, loaded *payload.Map, o cfgOpts) *payload.Map {
	now := time.Now()
	at, err := whenFrom(o.revertIn, o.revertAt, now)
	fail := func(msg string) *payload.Map {
		loaded.Set("result", false).Set("comment", msg)
		c.Retcode = 1
		safeDiscard(ctx, c, n, loaded)
		return loaded
	}
	if err != nil {
		return fail("Unable to schedule the revert: " + err.Error())
	}
	jid := currentJID(c)
	if n.DriverName() == "junos" {
		// The device's confirmed commit, as napalm.junos_commit(confirm=...).
		secs := int(at.Sub(now) / time.Second)
		if cm := safeCommit(ctx, c, n, loaded, secs); !cm.Bool("result") {
			loaded.Set("comment", "Unable to commit confirm: "+loaded.Str("comment"))
			return loaded
		}
	} else {
		if err := scheduleAvailable(c); err != nil {
			return fail("Unable to schedule the revert: " + err.Error())
		}
		running := n.Call(ctx, "get_config", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetConfig(ctx, "running") })
		text := ""
		if out, ok := running.Get("out"); ok {
			if om, ok := out.(*payload.Map); ok {
				text = om.Str("running")
			}
		}
		if !running.Bool("result") || text == "" {
			return fail("Unable to read the running config to revert to: " + running.Str("comment"))
		}
		file, err := commitFile(c, jid, "revert", text)
		if err != nil {
			return fail("Unable to save the running config: " + err.Error())
		}
		if cm := safeCommit(ctx, c, n, loaded, 0); !cm.Bool("result") {
			return loaded
		}
		at = revertTime(c, at, time.Now())
		if err := scheduleCommitJob(ctx, c, jid, file, true, at); err != nil {
			loaded.Set("result", false).Set("comment", "The change is committed, but the revert could not be scheduled: "+err.Error())
			c.Retcode = 1
			return loaded
		}
	}
	loaded.Set("comment", fmt.Sprintf("The commit ID is: %s.\nThis commit will be reverted at: %s, unless confirmed.\nTo confirm the commit and avoid reverting, you can execute:\n\nsalt %s net.confirm_commit %s",
		jid, pytime.Strftime(at, "%Y-%m-%dT%H:%M:%S"), c.Env.ID, jid))
	loaded.Set("commit_id", jid)
	return loaded
}

// minRevertLead is how far ahead of the moment it is scheduled a revert's
// time must be. The scheduler does not run a once job whose time (kept to
// the second) has already passed when it first sees the job.
const minRevertLead = 2 * time.Second

// revertTime is the time the revert is scheduled for: at, or now plus
// minRevertLead when the commit took so long (a slow device, a loaded
// machine) that at is already past or too close. Salt schedules at as it
// is, and a revert whose time passed during the commit never runs: the
// change the user wanted reverted unless confirmed stays for good.
func revertTime(c *modules.Call, at, now time.Time) time.Time {
	earliest := now.Add(minRevertLead)
	if !at.Before(earliest) {
		return at
	}
	c.Log().Warn("the commit took until past the revert time; reverting as soon as possible",
		"revert_at", pytime.Strftime(at, "%Y-%m-%dT%H:%M:%S"), "scheduled_at", pytime.Strftime(earliest, "%Y-%m-%dT%H:%M:%S"))
	return earliest
}

// cancelCommit is net.cancel_commit.
func cancelCommit(ctx context.Context, c *modules.Call) (any, error) {
	return cancelCommitJID(ctx, c, payload.Text(c.Args.Get("jid")))
}

// cancelCommitJID takes the scheduled job of a commit ID off the schedule.
func cancelCommitJID(ctx context.Context, c *modules.Call, jid string) (*payload.Map, error) {
	r, err := callFn(ctx, c, "schedule.delete", commitJobPrefix+jid)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	removed, ok := r.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: schedule.delete returned %v", modules.ErrExecution, r)
	}
	if removed.Bool("result") {
		if _, err := callFn(ctx, c, "schedule.save"); err != nil {
			c.Log().Warn("cannot save the schedule", "err", err)
		}
		removed.Set("comment", fmt.Sprintf("Commit #%s cancelled.", jid))
		removeCommitFiles(c, jid)
	} else {
		removed.Set("comment", fmt.Sprintf("Unable to find commit #%s.", jid))
	}
	return removed, nil
}

// removeCommitFiles deletes the files saved for a commit ID.
func removeCommitFiles(c *modules.Call, jid string) {
	if c.Env == nil || c.Env.Opts == nil {
		return
	}
	v, ok := c.Env.Opts.Get("cachedir")
	if !ok || payload.Text(v) == "" {
		return
	}
	for _, kind := range []string{"commit", "revert"} {
		_ = os.Remove(filepath.Join(payload.Text(v), "napalm", kind+"_"+filepath.Base(jid)+".cfg"))
	}
}

// confirmCommit is net.confirm_commit: on junos the device's pending
// confirmed commit is confirmed; elsewhere the scheduled revert is
// cancelled.
func confirmCommit(ctx context.Context, c *modules.Call) (any, error) {
	jid := payload.Text(c.Args.Get("jid"))
	junos := false
	if c.Env != nil && c.Env.Grains != nil {
		junos = c.Env.Grains.Str("os") == "junos"
	}
	var confirmed *payload.Map
	if junos {
		r, err := run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
			return n.Call(ctx, "confirm_commit", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.ConfirmCommit(ctx) }), nil
		})
		if err != nil {
			return nil, err
		}
		m, ok := r.(*payload.Map)
		if !ok {
			return r, nil
		}
		confirmed = payload.NewMap("result", m.Bool("result"), "comment", m.Str("comment"))
	} else {
		r, err := cancelCommitJID(ctx, c, jid)
		if err != nil {
			return nil, err
		}
		confirmed = r
	}
	if confirmed.Bool("result") {
		confirmed.Set("comment", fmt.Sprintf("Commit #%s confirmed.", jid))
	}
	return confirmed, nil
}
