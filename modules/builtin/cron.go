package builtin

// This file is Salt's cron module (salt/modules/cron.py): a user's crontab
// read with `crontab -l` and written back with `crontab FILE`, in Salt's
// layout (the lines before Salt's marker kept as they are, then the
// environment lines, the timed jobs and the @special jobs, each job after
// a comment line carrying its SALT_CRON_IDENTIFIER), so a crontab written
// by Salt is managed by gsalt unchanged and the other way round.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrCrontabNotFound is the reason the cron module does not load: Salt's
// cron module needs crontab(1) (its __virtual__ text).
var ErrCrontabNotFound = errors.New("Cannot load cron module: crontab command not found")

const (
	// cronTag is the marker line after which Salt owns the crontab.
	cronTag = "# Lines below here are managed by Salt, do not edit"
	// cronIDKey introduces a job's identifier in its comment line.
	cronIDKey = "SALT_CRON_IDENTIFIER"
	// cronNoID stands for a job without identifier when matching.
	cronNoID = "NO ID SET"
	// cronMaxTab bounds the crontab read into memory.
	cronMaxTab = 16 << 20
)

// cronJob is one job of a crontab: a timed job, or a @special one when
// special is set. identifier and comment are nil (None) or strings;
// commented is what the caller gave (only true disables the line).
type cronJob struct {
	special                                bool
	spec                                   string
	minute, hour, daymonth, month, dayweek string
	cmd                                    string
	identifier, comment, commented         any
}

// cronEnv is one NAME=value line; value is nil (None) or a string.
type cronEnv struct {
	name  string
	value any
}

// cronTab is list_tab's structure.
type cronTab struct {
	pre     []string
	env     []cronEnv
	crons   []*cronJob
	special []*cronJob
}

func (j *cronJob) toMap() *payload.Map {
	if j.special {
		return payload.NewMap("spec", j.spec, "cmd", j.cmd, "identifier", j.identifier, "comment", j.comment, "commented", j.commented)
	}
	return payload.NewMap("minute", j.minute, "hour", j.hour, "daymonth", j.daymonth, "month", j.month, "dayweek", j.dayweek,
		"identifier", j.identifier, "cmd", j.cmd, "comment", j.comment, "commented", j.commented)
}

// field is cron.get(key): nil for the fields the job's kind lacks.
func (j *cronJob) field(key string) any {
	switch key {
	case "spec":
		if j.special {
			return j.spec
		}
		return nil
	}
	if j.special {
		return nil
	}
	switch key {
	case "minute":
		return j.minute
	case "hour":
		return j.hour
	case "daymonth":
		return j.daymonth
	case "month":
		return j.month
	case "dayweek":
		return j.dayweek
	}
	return nil
}

func (t *cronTab) toMap() *payload.Map {
	pre := make([]any, len(t.pre))
	for i, l := range t.pre {
		pre[i] = l
	}
	crons := make([]any, len(t.crons))
	for i, j := range t.crons {
		crons[i] = j.toMap()
	}
	special := make([]any, len(t.special))
	for i, j := range t.special {
		special[i] = j.toMap()
	}
	env := make([]any, len(t.env))
	for i, e := range t.env {
		env[i] = payload.NewMap("name", e.name, "value", e.value)
	}
	return payload.NewMap("pre", pre, "crons", crons, "special", special, "env", env)
}

func cronFunctions() []modules.Function {
	user := req("user")
	cmdP := req("cmd")
	ident := opt("identifier", nil)
	timeOpts := []modules.Param{opt("minute", nil), opt("hour", nil), opt("daymonth", nil), opt("month", nil), opt("dayweek", nil)}
	rmJob := modules.Spec{Params: append(append([]modules.Param{user, cmdP}, timeOpts...), ident)}
	rmJobFn := func(ctx context.Context, c *modules.Call) (any, error) {
		return cronRmJob(ctx, c, c.Args.Get("user"), pyfmt.Str(c.Args.Get("cmd")), timeArgs(c), c.Args.Get("identifier"))
	}
	listFn := func(ctx context.Context, c *modules.Call) (any, error) {
		t, err := cronListTab(ctx, c, c.Args.Get("user"))
		if err != nil {
			return nil, err
		}
		return t.toMap(), nil
	}
	return []modules.Function{
		{Name: "cron.raw_cron", Spec: modules.Spec{Params: []modules.Param{user}},
			Doc: "Return the contents of the user's crontab\n\nCLI Example:\n\n    salt '*' cron.raw_cron root",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return cronRaw(ctx, c, c.Args.Get("user")) }},
		{Name: "cron.list_tab", Spec: modules.Spec{Params: []modules.Param{user}},
			Doc: "Return the contents of the specified user's crontab\n\nCLI Example:\n\n    salt '*' cron.list_tab root", Fn: listFn},
		{Name: "cron.ls", Spec: modules.Spec{Params: []modules.Param{user}},
			Doc: "Return the contents of the specified user's crontab\n\nCLI Example:\n\n    salt '*' cron.ls root", Fn: listFn},
		{Name: "cron.get_entry", Spec: modules.Spec{Params: []modules.Param{user, ident, opt("cmd", nil)}},
			Doc: "Return the entry of the user's crontab with this identifier (or, without one, this cmd), or False\n\nCLI Example:\n\n    salt '*' cron.get_entry root identifier=task1",
			Fn:  cronGetEntry},
		{Name: "cron.set_job", Spec: modules.Spec{Params: append(append([]modules.Param{user}, req("minute"), req("hour"), req("daymonth"), req("month"), req("dayweek"), cmdP),
			opt("commented", false), opt("comment", nil), ident)},
			Doc: "Sets a cron job up for a specified user.\n\nCLI Example:\n\n    salt '*' cron.set_job root '*' '*' '*' '*' 1 /usr/local/weekly",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				j := &cronJob{cmd: pyfmt.Str(c.Args.Get("cmd")), commented: c.Args.Get("commented"), comment: c.Args.Get("comment"), identifier: c.Args.Get("identifier")}
				j.minute, j.hour, j.daymonth, j.month, j.dayweek = cronScrub(c.Args.Get("minute")), cronScrub(c.Args.Get("hour")),
					cronScrub(c.Args.Get("daymonth")), cronScrub(c.Args.Get("month")), cronScrub(c.Args.Get("dayweek"))
				return cronSetJob(ctx, c, c.Args.Get("user"), j)
			}},
		{Name: "cron.set_special", Spec: modules.Spec{Params: []modules.Param{user, req("special"), cmdP, opt("commented", false), opt("comment", nil), ident}},
			Doc: "Set up a special command in the crontab.\n\nCLI Example:\n\n    salt '*' cron.set_special root @hourly 'echo foobar'",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				j := &cronJob{special: true, spec: pyfmt.Str(c.Args.Get("special")), cmd: pyfmt.Str(c.Args.Get("cmd")),
					commented: c.Args.Get("commented"), comment: c.Args.Get("comment"), identifier: c.Args.Get("identifier")}
				return cronSetSpecial(ctx, c, c.Args.Get("user"), j)
			}},
		{Name: "cron.rm_job", Spec: rmJob, Doc: "Remove a cron job for a specified user; with day/time arguments only a job matching them.\n\nCLI Example:\n\n    salt '*' cron.rm_job root /usr/local/weekly", Fn: rmJobFn},
		{Name: "cron.rm", Spec: rmJob, Doc: "Remove a cron job for a specified user (alias of cron.rm_job).\n\nCLI Example:\n\n    salt '*' cron.rm root /usr/local/weekly", Fn: rmJobFn},
		{Name: "cron.rm_special", Spec: modules.Spec{Params: []modules.Param{user, cmdP, opt("special", nil), ident}},
			Doc: "Remove a special cron job for a specified user.\n\nCLI Example:\n\n    salt '*' cron.rm_special root /usr/bin/foo",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cronRmSpecial(ctx, c, c.Args.Get("user"), pyfmt.Str(c.Args.Get("cmd")), c.Args.Get("special"), c.Args.Get("identifier"))
			}},
		{Name: "cron.set_env", Spec: modules.Spec{Params: []modules.Param{user, req("name"), opt("value", nil)}},
			Doc: "Set up an environment variable in the crontab.\n\nCLI Example:\n\n    salt '*' cron.set_env root MAILTO user@example.com",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cronSetEnv(ctx, c, c.Args.Get("user"), pyfmt.Str(c.Args.Get("name")), c.Args.Get("value"))
			}},
		{Name: "cron.rm_env", Spec: modules.Spec{Params: []modules.Param{user, req("name")}},
			Doc: "Remove cron environment variable for a specified user.\n\nCLI Example:\n\n    salt '*' cron.rm_env root MAILTO",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return cronRmEnv(ctx, c, c.Args.Get("user"), pyfmt.Str(c.Args.Get("name")))
			}},
		{Name: "cron.write_cron_file", Spec: modules.Spec{Params: []modules.Param{user, req("path")}},
			Doc: "Writes the contents of a file to a user's crontab\n\nCLI Example:\n\n    salt '*' cron.write_cron_file root /tmp/new_cron",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := cronInstall(ctx, c, c.Args.Get("user"), c.Args.Str("path"))
				if err != nil {
					return nil, err
				}
				return res.retcode == 0, nil
			}},
		{Name: "cron.write_cron_file_verbose", Spec: modules.Spec{Params: []modules.Param{user, req("path")}},
			Doc: "Writes the contents of a file to a user's crontab and return error message on error\n\nCLI Example:\n\n    salt '*' cron.write_cron_file_verbose root /tmp/new_cron",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := cronInstall(ctx, c, c.Args.Get("user"), c.Args.Str("path"))
				if err != nil {
					return nil, err
				}
				return payload.NewMap("pid", res.pid, "retcode", int64(res.retcode), "stdout", res.stdout, "stderr", res.stderr), nil
			}},
	}
}

// timeArgs are rm_job's optional day/time arguments, by name.
func timeArgs(c *modules.Call) map[string]any {
	m := map[string]any{}
	for _, k := range []string{"minute", "hour", "daymonth", "month", "dayweek"} {
		m[k] = c.Args.Get(k)
	}
	return m
}

// cronScrub is str(v).lower().
func cronScrub(v any) string { return strings.ToLower(pyfmt.Str(v)) }

// cronResult is what cmd.run_all reports for a crontab command.
type cronResult struct {
	stdout, stderr string
	retcode        int
	pid            int64
}

// cronArgv is the crontab command for user: no -u when the minion runs as
// that user, -u USER when it runs as root (which may change any crontab),
// otherwise the plain command (Salt switches user with runas there).
func cronArgv(user any, extra ...string) []string {
	euid := int64(os.Geteuid())
	if uid, ok := fileUserToUID(user).(int64); ok && uid == euid {
		return append([]string{"crontab"}, extra...)
	}
	if euid == 0 {
		return append([]string{"crontab", "-u", pyfmt.Str(user)}, extra...)
	}
	return append([]string{"crontab"}, extra...)
}

// cronExec runs argv; keep leaves stdout as it is (rstrip=False).
func cronExec(ctx context.Context, argv []string, keep bool) (cronResult, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return cronResult{}, fmt.Errorf("%w: Unable to run command '%s': %v", modules.ErrExecution, strings.Join(argv, " "), err)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	stdout := &pkgLimitedBuffer{max: cronMaxTab}
	stderr := &pkgLimitedBuffer{max: pkgMaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	res := cronResult{stdout: stdout.buf.String(), stderr: strings.TrimRight(stderr.buf.String(), " \t\r\n")}
	if !keep {
		res.stdout = strings.TrimRight(res.stdout, " \t\r\n")
	}
	if cmd.Process != nil {
		res.pid = int64(cmd.Process.Pid)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.retcode = exitErr.ExitCode()
	default:
		return res, fmt.Errorf("%w: Unable to run command '%s': %v", modules.ErrExecution, strings.Join(argv, " "), err)
	}
	return res, nil
}

// cronRaw is raw_cron: `crontab -l` output (empty when the user has no
// crontab), without the three-line header some crons print.
func cronRaw(ctx context.Context, c *modules.Call, user any) (string, error) {
	res, err := cronExec(ctx, cronArgv(user, "-l"), true)
	if err != nil {
		return "", err
	}
	lines := py.SplitLines(res.stdout, true)
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# DO NOT EDIT THIS FILE - edit the master and reinstall.") {
		lines = lines[min(3, len(lines)):]
	}
	return strings.Join(lines, ""), nil
}

// cronListTab is list_tab: the lines before the marker in pre, the rest
// parsed into env, crons and special.
func cronListTab(ctx context.Context, c *modules.Call, user any) (*cronTab, error) {
	data, err := cronRaw(ctx, c, user)
	if err != nil {
		return nil, err
	}
	return cronParse(data), nil
}

func cronParse(data string) *cronTab {
	t := &cronTab{}
	managed := false
	var comment, identifier any
	for _, line := range py.SplitLines(data, false) {
		if line == cronTag {
			managed = true
			continue
		}
		if !managed {
			t.pre = append(t.pre, line)
			continue
		}
		disabled := false
		if strings.HasPrefix(line, "#DISABLED#") {
			line = line[len("#DISABLED#"):]
			disabled = true
		}
		switch {
		case strings.HasPrefix(line, "@"):
			comps := strings.FieldsFunc(line, py.IsSpace)
			if len(comps) < 2 {
				continue
			}
			t.special = append(t.special, &cronJob{special: true, spec: comps[0], cmd: strings.Join(comps[1:], " "),
				identifier: identifier, comment: comment, commented: disabled})
			identifier, comment = nil, nil
		case strings.HasPrefix(line, "#"):
			text := strings.TrimLeft(line, "# ")
			if strings.Contains(text, cronIDKey) {
				parts := strings.Split(text, cronIDKey)
				text = strings.TrimRightFunc(parts[0], py.IsSpace)
				if r := []rune(parts[1]); len(r) > 1 {
					identifier = string(r[1:])
				}
			}
			if comment == nil {
				comment = text
			} else {
				comment = comment.(string) + "\n" + text
			}
		case cronIsEnv(line):
			name, value, _ := strings.Cut(line, "=")
			t.env = append(t.env, cronEnv{name: name, value: value})
		default:
			comps := strings.Split(line, " ")
			if len(comps) <= 5 {
				continue
			}
			t.crons = append(t.crons, &cronJob{minute: comps[0], hour: comps[1], daymonth: comps[2], month: comps[3], dayweek: comps[4],
				identifier: identifier, cmd: strings.Join(comps[5:], " "), comment: comment, commented: disabled})
			identifier, comment = nil, nil
		}
	}
	return t
}

// cronIsEnv: an "=" not first, and before the first space if any.
func cronIsEnv(line string) bool {
	eq := strings.IndexByte(line, '=')
	if eq <= 0 {
		return false
	}
	sp := strings.IndexByte(line, ' ')
	return sp < 0 || eq < sp
}

// cronCommentLine is the comment line written before a job, or "" when
// the job has neither comment nor identifier.
func cronCommentLine(j *cronJob) string {
	if j.comment == nil && j.identifier == nil {
		return ""
	}
	out := "#"
	if payload.Truthy(j.comment) {
		text := pyfmt.Str(j.comment)
		if j.special {
			text = strings.TrimRightFunc(text, py.IsSpace)
		}
		out += " " + strings.ReplaceAll(text, "\n", "\n# ")
	}
	if payload.Truthy(j.identifier) {
		out += " " + cronIDKey + ":" + pyfmt.Str(j.identifier)
	}
	return out + "\n"
}

// cronRender is _render_tab: the text written to the crontab.
func cronRender(t *cronTab) string {
	var b strings.Builder
	for _, l := range t.pre {
		b.WriteString(l + "\n")
	}
	// Salt appends its marker unless the last kept line already is it,
	// which a parsed tab never has.
	b.WriteString(cronTag + "\n")
	for _, e := range t.env {
		if e.value == nil || pyEq(e.value, "") {
			b.WriteString(e.name + "=\"\"\n")
		} else {
			b.WriteString(e.name + "=" + pyfmt.Str(e.value) + "\n")
		}
	}
	disabled := func(j *cronJob) string {
		if v, ok := j.commented.(bool); ok && v {
			return "#DISABLED#"
		}
		return ""
	}
	for _, j := range t.crons {
		b.WriteString(cronCommentLine(j))
		fmt.Fprintf(&b, "%s%s %s %s %s %s %s\n", disabled(j), j.minute, j.hour, j.daymonth, j.month, j.dayweek, j.cmd)
	}
	for _, j := range t.special {
		b.WriteString(cronCommentLine(j))
		fmt.Fprintf(&b, "%s%s %s\n", disabled(j), j.spec, j.cmd)
	}
	return b.String()
}

// cronInstall runs `crontab [-u user] path`.
func cronInstall(ctx context.Context, c *modules.Call, user any, path string) (cronResult, error) {
	return cronExec(ctx, cronArgv(user, path), false)
}

// cronWrite is _write_cron_lines: the rendered tab through a 0600 temp
// file into crontab. It returns "" on success, else crontab's stderr.
func cronWrite(ctx context.Context, c *modules.Call, user any, t *cronTab) (string, bool, error) {
	f, err := os.CreateTemp("", "__salt.tmp.")
	if err != nil {
		return "", false, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(cronRender(t))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("%w: %v", modules.ErrExecution, err)
	}
	res, err := cronInstall(ctx, c, user, f.Name())
	if err != nil {
		return "", false, err
	}
	if res.retcode != 0 {
		return res.stderr, false, nil
	}
	return "", true, nil
}

// cronID is _cron_id: the job's identifier, or "NO ID SET".
func cronID(j *cronJob) string {
	if payload.Truthy(j.identifier) {
		return pyfmt.Str(j.identifier)
	}
	return cronNoID
}

// cronMatched is _cron_matched: the job is the one named by cmd and
// identifier (jobs without identifier match on cmd alone).
func cronMatched(j *cronJob, cmd string, identifier any) bool {
	cid := cronID(j)
	eid := cronNoID
	if payload.Truthy(identifier) {
		eid = pyfmt.Str(identifier)
	}
	if j.cmd != cmd && cid == cronNoID && eid == cronNoID {
		return false
	}
	if j.cmd == cmd && cid == cronNoID {
		cid = eid
	}
	return eid == cid
}

// CronNeedsChange is _needs_change: new differs from old and is not None
// ("random" counts only against "*"). The cron state uses it too.
func CronNeedsChange(old, new any) bool {
	if pyEq(old, new) {
		return false
	}
	if pyEq(new, "random") {
		return pyEq(old, "*")
	}
	return new != nil
}

// CronMatched is cronMatched over a list_tab entry (for the cron state).
func CronMatched(entry *payload.Map, cmd string, identifier any) bool {
	j := &cronJob{cmd: entry.Str("cmd")}
	j.identifier, _ = entry.Get("identifier")
	return cronMatched(j, cmd, identifier)
}

// cronSetJob is set_job: "present", "new", "updated" or crontab's error.
func cronSetJob(ctx context.Context, c *modules.Call, user any, want *cronJob) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	for _, j := range slicesConcat(t.crons, t.special) {
		if !cronMatched(j, want.cmd, want.identifier) {
			continue
		}
		if !cronDiffers(j, want) {
			return "present", nil
		}
		cid := cronID(j)
		if _, err := cronRemoveMatched(ctx, c, user, j.special, want.cmd, cid); err != nil {
			return nil, err
		}
		next := *want
		next.special = false
		keep := func(old any, cur *string) {
			if !CronNeedsChange(old, *cur) {
				*cur = pyfmt.Str(old)
			}
		}
		if !j.special {
			keep(j.minute, &next.minute)
			keep(j.hour, &next.hour)
			keep(j.daymonth, &next.daymonth)
			keep(j.month, &next.month)
			keep(j.dayweek, &next.dayweek)
		}
		cronCarry(j, &next, cid)
		ret, err := cronSetJob(ctx, c, user, &next)
		return cronNewIsUpdated(ret), err
	}
	fields := cronDateTime(want)
	j := *want
	j.minute, j.hour, j.daymonth, j.month, j.dayweek = fields[0], fields[1], fields[2], fields[3], fields[4]
	t.crons = append(t.crons, &j)
	return cronCommit(ctx, c, user, t, "new")
}

// cronSetSpecial is set_special.
func cronSetSpecial(ctx context.Context, c *modules.Call, user any, want *cronJob) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	for _, j := range slicesConcat(t.crons, t.special) {
		if !cronMatched(j, want.cmd, want.identifier) {
			continue
		}
		if !cronDiffers(j, want) {
			return "present", nil
		}
		cid := cronID(j)
		if _, err := cronRemoveMatched(ctx, c, user, j.special, want.cmd, cid); err != nil {
			return nil, err
		}
		next := *want
		if !CronNeedsChange(j.field("spec"), want.spec) {
			next.spec = pyfmt.Str(j.field("spec"))
		}
		cronCarry(j, &next, cid)
		ret, err := cronSetSpecial(ctx, c, user, &next)
		return cronNewIsUpdated(ret), err
	}
	j := *want
	t.special = append(t.special, &j)
	return cronCommit(ctx, c, user, t, "new")
}

func slicesConcat(a, b []*cronJob) []*cronJob {
	out := make([]*cronJob, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// cronDiffers runs set_job/set_special's list of checks of an existing
// job j against the wanted one.
func cronDiffers(j, want *cronJob) bool {
	var setID any = j.identifier
	if j.identifier == nil {
		setID = cronNoID
	}
	pairs := [][2]any{{j.comment, want.comment}, {j.commented, want.commented}, {want.identifier, setID}}
	for _, k := range []string{"minute", "hour", "daymonth", "month", "dayweek"} {
		var nv any
		if !want.special {
			nv = want.field(k)
		}
		pairs = append(pairs, [2]any{j.field(k), nv})
	}
	var ns any
	if want.special {
		ns = want.spec
	}
	pairs = append(pairs, [2]any{j.field("spec"), ns})
	// cid is never empty, so the command is always compared.
	pairs = append(pairs, [2]any{j.cmd, want.cmd})
	for _, p := range pairs {
		if CronNeedsChange(p[0], p[1]) {
			return true
		}
	}
	return false
}

// cronRemoveMatched removes the old job before it is written anew.
// Like Salt it looks the job up by the new command and the old job's id.
func cronRemoveMatched(ctx context.Context, c *modules.Call, user any, special bool, cmd, cid string) (any, error) {
	if special {
		return cronRmSpecial(ctx, c, user, cmd, nil, cid)
	}
	return cronRmJob(ctx, c, user, cmd, map[string]any{}, cid)
}

// cronCarry keeps the old commented flag, comment, command and
// identifier where the new job does not change them.
func cronCarry(j, next *cronJob, cid string) {
	if !CronNeedsChange(j.commented, next.commented) {
		next.commented = j.commented
	}
	if !CronNeedsChange(j.comment, next.comment) {
		next.comment = j.comment
	}
	var id any = cid
	if !CronNeedsChange(j.cmd, next.cmd) {
		next.cmd = j.cmd
		if cid == cronNoID {
			if payload.Truthy(next.identifier) {
				id = next.identifier
			}
			if pyEq(id, cronNoID) && j.identifier == nil {
				id = nil
			}
		}
	}
	if !payload.Truthy(id) || !CronNeedsChange(id, next.identifier) {
		next.identifier = id
	}
}

func cronNewIsUpdated(ret any) any {
	if ret == "new" {
		return "updated"
	}
	return ret
}

// cronCommit writes t and returns ok, or crontab's error text.
func cronCommit(ctx context.Context, c *modules.Call, user any, t *cronTab, ok string) (any, error) {
	errText, good, err := cronWrite(ctx, c, user, t)
	if err != nil {
		return nil, err
	}
	if !good {
		return errText, nil
	}
	return ok, nil
}

// cronDateTime is _get_cron_date_time: "random" and "a:b" ranges picked
// at random, other values as given.
func cronDateTime(j *cronJob) [5]string {
	pick := func(v string, lo, hi int) string {
		if v == "random" {
			return strconv.Itoa(lo + rand.IntN(hi-lo+1))
		}
		if parts := strings.Split(v, ":"); len(parts) == 2 {
			sort.Strings(parts)
			a, err1 := strconv.Atoi(parts[0])
			b, err2 := strconv.Atoi(parts[1])
			if err1 == nil && err2 == nil && b >= a {
				return strconv.Itoa(a + rand.IntN(b-a+1))
			}
		}
		return v
	}
	month := pick(j.month, 1, 12)
	dmax := 28
	switch month {
	case "1", "3", "5", "7", "8", "10", "12":
		dmax = 31
	case "4", "6", "9", "11":
		dmax = 30
	}
	day := j.daymonth
	if day == "random" {
		day = strconv.Itoa(1 + rand.IntN(dmax))
	}
	return [5]string{pick(j.minute, 0, 59), pick(j.hour, 0, 23), day, month, pick(j.dayweek, 0, 6)}
}

// cronDateTimeMatch is _date_time_match for rm_job.
func cronDateTimeMatch(j *cronJob, want map[string]any) bool {
	for _, k := range []string{"minute", "hour", "daymonth", "month", "dayweek"} {
		v := want[k]
		if v == nil {
			continue
		}
		s := pyfmt.Str(v)
		if pyEq(j.field(k), s) || (strings.ToLower(s) == "random" && !pyEq(j.field(k), "*")) {
			continue
		}
		return false
	}
	return true
}

// cronRmJob is rm_job: "removed", "absent" or crontab's error; the tab is
// written only when a job was removed.
func cronRmJob(ctx context.Context, c *modules.Call, user any, cmd string, when map[string]any, identifier any) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	anyTime := false
	for _, v := range when {
		anyTime = anyTime || v != nil
	}
	for i, j := range t.crons {
		if cronMatched(j, cmd, identifier) && (!anyTime || cronDateTimeMatch(j, when)) {
			t.crons = append(t.crons[:i], t.crons[i+1:]...)
			return cronCommit(ctx, c, user, t, "removed")
		}
	}
	return "absent", nil
}

// cronRmSpecial is rm_special; Salt writes the tab back even when nothing
// was removed.
func cronRmSpecial(ctx context.Context, c *modules.Call, user any, cmd string, special, identifier any) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	ret := "absent"
	for i, j := range t.special {
		if cronMatched(j, cmd, identifier) && (special == nil || pyEq(j.spec, special)) {
			t.special = append(t.special[:i], t.special[i+1:]...)
			ret = "removed"
			break
		}
	}
	return cronCommit(ctx, c, user, t, ret)
}

// cronSetEnv is set_env.
func cronSetEnv(ctx context.Context, c *modules.Call, user any, name string, value any) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	for _, e := range t.env {
		if e.name != name {
			continue
		}
		if pyEq(value, e.value) {
			return "present", nil
		}
		if _, err := cronRmEnv(ctx, c, user, name); err != nil {
			return nil, err
		}
		ret, err := cronSetEnv(ctx, c, user, name, value)
		return cronNewIsUpdated(ret), err
	}
	t.env = append(t.env, cronEnv{name: name, value: value})
	return cronCommit(ctx, c, user, t, "new")
}

// cronRmEnv is rm_env (the last variable of that name goes); the tab is
// written back even when nothing was removed.
func cronRmEnv(ctx context.Context, c *modules.Call, user any, name string) (any, error) {
	t, err := cronListTab(ctx, c, user)
	if err != nil {
		return nil, err
	}
	ret := "absent"
	idx := -1
	for i, e := range t.env {
		if e.name == name {
			idx = i
		}
	}
	if idx >= 0 {
		t.env = append(t.env[:idx], t.env[idx+1:]...)
		ret = "removed"
	}
	return cronCommit(ctx, c, user, t, ret)
}

// cronGetEntry is get_entry.
func cronGetEntry(ctx context.Context, c *modules.Call) (any, error) {
	identifier, cmd := c.Args.Get("identifier"), c.Args.Get("cmd")
	if payload.Truthy(identifier) && payload.Truthy(cmd) {
		c.Log().Warn("Both identifier and cmd are specified. Only using identifier.")
		cmd = nil
	}
	t, err := cronListTab(ctx, c, c.Args.Get("user"))
	if err != nil {
		return nil, err
	}
	for _, j := range slicesConcat(t.crons, t.special) {
		if payload.Truthy(identifier) && pyEq(j.identifier, identifier) {
			return j.toMap(), nil
		}
		if payload.Truthy(cmd) && pyEq(j.cmd, cmd) {
			return j.toMap(), nil
		}
	}
	return false, nil
}
