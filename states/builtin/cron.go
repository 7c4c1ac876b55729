package builtin

// This file is Salt's cron state module (salt/states/cron.py): cron.present,
// cron.absent, cron.env_present, cron.env_absent and cron.file over the
// cron execution module.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func cronStates() []states.Function {
	return []states.Function{
		{Name: "cron.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", "root"), sbOpt("minute", "*"), sbOpt("hour", "*"),
			sbOpt("daymonth", "*"), sbOpt("month", "*"), sbOpt("dayweek", "*"), sbOpt("comment", nil), sbOpt("commented", false),
			sbOpt("identifier", false), sbOpt("special", nil)}}, Fn: cronPresent},
		{Name: "cron.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", "root"), sbOpt("identifier", false), sbOpt("special", nil)}, Kwargs: true},
			Fn: cronAbsent},
		{Name: "cron.env_present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("value", nil), sbOpt("user", "root")}}, Fn: cronEnvPresent},
		{Name: "cron.env_absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", "root")}}, Fn: cronEnvAbsent},
		{Name: "cron.file", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("source_hash", ""), sbOpt("source_hash_name", nil), sbOpt("user", "root"),
			sbOpt("template", nil), sbOpt("context", nil), sbOpt("replace", true), sbOpt("defaults", nil), sbOpt("backup", "")}, Kwargs: true}, Fn: cronFileState},
	}
}

// cronStrOrNil is str(v).lower() for a given value, None kept.
func cronLower(v any) any {
	if v == nil {
		return nil
	}
	return strings.ToLower(pyfmt.Str(v))
}

// cronCheck is _check_cron: "absent", "present" or "update" for the job
// the state describes.
func cronCheck(ctx context.Context, c *states.Call, user any, cmd string, when map[string]any, comment, commented, identifier, special any) (string, error) {
	if identifier != nil {
		identifier = pyfmt.Str(identifier)
	}
	if commented != nil {
		b, ok := commented.(bool)
		commented = ok && b
	}
	v, err := sbExec(ctx, c, "cron.list_tab", []any{user}, nil)
	if err != nil {
		return "", err
	}
	tab, _ := v.(*payload.Map)
	pairs := func(e *payload.Map, keys []string, wants []any) bool {
		for i, k := range keys {
			old, _ := e.Get(k)
			if mbuiltin.CronNeedsChange(old, wants[i]) {
				return true
			}
		}
		return false
	}
	list, keys, wants := "special", []string{"spec"}, []any{special}
	if special == nil {
		list = "crons"
		keys = []string{"minute", "hour", "daymonth", "month", "dayweek"}
		wants = nil
		for _, k := range keys {
			wants = append(wants, cronLower(when[k]))
		}
	}
	keys = append(keys, "identifier", "cmd", "comment", "commented")
	wants = append(wants, identifier, cmd, comment, commented)
	for _, e := range tab.List(list) {
		em, ok := e.(*payload.Map)
		if !ok || !mbuiltin.CronMatched(em, cmd, identifier) {
			continue
		}
		if pairs(em, keys, wants) {
			return "update", nil
		}
		return "present", nil
	}
	return "absent", nil
}

// cronStateName is name.strip() and the identifier defaulting to it.
func cronStateName(c *states.Call) (string, any) {
	name := strings.TrimSpace(sbName(c))
	identifier := c.Args.Get("identifier")
	if b, ok := identifier.(bool); ok && !b {
		identifier = name
	}
	return name, identifier
}

// The comments of cron.present/absent and cron.env_present/env_absent
// differ only in what they name ("Cron" or "Cron env").

// cronPresentTest is a present state's test=True answer for the check's
// status.
func cronPresentTest(ret *states.Ret, what, name, status string) {
	ret.Result = states.None
	switch status {
	case "absent":
		ret.Comment = fmt.Sprintf("%s %s is set to be added", what, name)
	case "present":
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("%s %s already present", what, name)
	case "update":
		ret.Comment = fmt.Sprintf("%s %s is set to be updated", what, name)
	}
}

// cronPresentResult is a present state's outcome from what the execution
// module answered (present, new, updated or an error text).
func cronPresentResult(ret *states.Ret, what, name string, user, data any) {
	switch data {
	case "present":
		ret.Comment = fmt.Sprintf("%s %s already present", what, name)
	case "new":
		ret.Comment = fmt.Sprintf("%s %s added to %s's crontab", what, name, pyfmt.Str(user))
		ret.Changes = payload.NewMap(pyfmt.Str(user), name)
	case "updated":
		ret.Comment = fmt.Sprintf("%s %s updated", what, name)
		ret.Changes = payload.NewMap(pyfmt.Str(user), name)
	default:
		ret.Comment = fmt.Sprintf("%s %s for user %s failed to commit with error \n%s", what, name, pyfmt.Str(user), pyfmt.Str(data))
		ret.Result = states.False
	}
}

// cronAbsentTest is an absent state's test=True answer for the check's
// status.
func cronAbsentTest(ret *states.Ret, what, name, status string) {
	ret.Result = states.None
	if status == "absent" {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("%s %s is absent", what, name)
	} else {
		ret.Comment = fmt.Sprintf("%s %s is set to be removed", what, name)
	}
}

// cronAbsentResult is an absent state's outcome from what the execution
// module answered (absent, removed or an error text).
func cronAbsentResult(ret *states.Ret, what, name string, user, data any) {
	switch data {
	case "absent":
		ret.Comment = fmt.Sprintf("%s %s already absent", what, name)
	case "removed":
		ret.Comment = fmt.Sprintf("%s %s removed from %s's crontab", what, name, pyfmt.Str(user))
		ret.Changes = payload.NewMap(pyfmt.Str(user), name)
	default:
		ret.Comment = fmt.Sprintf("%s %s for user %s failed to commit with error %s", what, name, pyfmt.Str(user), pyfmt.Str(data))
		ret.Result = states.False
	}
}

func cronPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name, identifier := cronStateName(c)
	user := c.Args.Get("user")
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	special := c.Args.Get("special")
	if c.Test {
		when := map[string]any{}
		for _, k := range []string{"minute", "hour", "daymonth", "month", "dayweek"} {
			when[k] = c.Args.Get(k)
		}
		status, err := cronCheck(ctx, c, user, name, when, c.Args.Get("comment"), c.Args.Get("commented"), identifier, special)
		if err != nil {
			return ret, err
		}
		cronPresentTest(&ret, "Cron", name, status)
		return ret, nil
	}
	kw := payload.NewMap("user", user, "cmd", name, "comment", c.Args.Get("comment"), "commented", c.Args.Get("commented"), "identifier", identifier)
	fun := "cron.set_special"
	if special == nil {
		fun = "cron.set_job"
		for _, k := range []string{"minute", "hour", "daymonth", "month", "dayweek"} {
			kw.Set(k, c.Args.Get(k))
		}
	} else {
		kw.Set("special", special)
	}
	data, err := sbExec(ctx, c, fun, nil, kw)
	if err != nil {
		return ret, err
	}
	cronPresentResult(&ret, "Cron", name, user, data)
	return ret, nil
}

func cronAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name, identifier := cronStateName(c)
	user := c.Args.Get("user")
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if c.Test {
		status, err := cronCheck(ctx, c, user, name, map[string]any{}, nil, nil, identifier, nil)
		if err != nil {
			return ret, err
		}
		cronAbsentTest(&ret, "Cron", name, status)
		return ret, nil
	}
	var data any
	var err error
	if special := c.Args.Get("special"); special == nil {
		data, err = sbExec(ctx, c, "cron.rm_job", []any{user, name}, payload.NewMap("identifier", identifier))
	} else {
		data, err = sbExec(ctx, c, "cron.rm_special", []any{user, name}, payload.NewMap("special", special, "identifier", identifier))
	}
	if err != nil {
		return ret, err
	}
	cronAbsentResult(&ret, "Cron", name, user, data)
	return ret, nil
}

// cronCheckEnv is _check_cron_env.
func cronCheckEnv(ctx context.Context, c *states.Call, user any, name string, value any) (string, error) {
	if value == nil {
		value = ""
	}
	v, err := sbExec(ctx, c, "cron.list_tab", []any{user}, nil)
	if err != nil {
		return "", err
	}
	tab, _ := v.(*payload.Map)
	for _, e := range tab.List("env") {
		em, ok := e.(*payload.Map)
		if !ok || em.Str("name") != name {
			continue
		}
		if old, _ := em.Get("value"); !pyfmt.Equal(value, old) {
			return "update", nil
		}
		return "present", nil
	}
	return "absent", nil
}

func cronEnvPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	user := c.Args.Get("user")
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if c.Test {
		status, err := cronCheckEnv(ctx, c, user, name, c.Args.Get("value"))
		if err != nil {
			return ret, err
		}
		cronPresentTest(&ret, "Cron env", name, status)
		return ret, nil
	}
	data, err := sbExec(ctx, c, "cron.set_env", []any{user, name}, payload.NewMap("value", c.Args.Get("value")))
	if err != nil {
		return ret, err
	}
	cronPresentResult(&ret, "Cron env", name, user, data)
	return ret, nil
}

func cronEnvAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := strings.TrimSpace(sbName(c))
	user := c.Args.Get("user")
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if c.Test {
		status, err := cronCheckEnv(ctx, c, user, name, nil)
		if err != nil {
			return ret, err
		}
		cronAbsentTest(&ret, "Cron env", name, status)
		return ret, nil
	}
	data, err := sbExec(ctx, c, "cron.rm_env", []any{user, name}, nil)
	if err != nil {
		return ret, err
	}
	cronAbsentResult(&ret, "Cron env", name, user, data)
	return ret, nil
}

// cronFileState is cron.file: the user's crontab copied to a temporary
// file, managed there like file.managed (source, template, hashes), and
// installed with crontab when it changed.
func cronFileState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	user := c.Args.Get("user")
	info, err := sbExec(ctx, c, "user.info", []any{user}, nil)
	group := ""
	if m, ok := info.(*payload.Map); err == nil && ok && len(m.List("groups")) > 0 {
		group = pyfmt.Str(m.List("groups")[0])
	} else {
		return states.Ret{Name: name, Result: states.False, Changes: &payload.Map{},
			Comment: fmt.Sprintf("Could not identify group for user %s", pyfmt.Str(user))}, nil
	}
	raw, err := sbExec(ctx, c, "cron.raw_cron", []any{user}, nil)
	if err != nil {
		return states.Ret{Name: name, Changes: &payload.Map{}}, err
	}
	text := pyfmt.Str(raw)
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	f, err := os.CreateTemp("", "__salt.tmp.")
	if err != nil {
		return states.Ret{Name: name, Changes: &payload.Map{}}, fmt.Errorf("cron.file: %w", err)
	}
	cronPath := f.Name()
	defer os.Remove(cronPath)
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return states.Ret{Name: name, Changes: &payload.Map{}}, fmt.Errorf("cron.file: %w", err)
	}
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if !payload.Truthy(c.Args.Get("replace")) {
		// the temporary copy always ends in a newline, so it is never empty
		ret.Comment = fmt.Sprintf("User %s already has a crontab. No changes made", pyfmt.Str(user))
		return ret, nil
	}
	// The rest is file.managed on the temporary copy, owned by the user
	// with mode 0600, without backup unless asked.
	args := payload.NewMap("name", cronPath, "source", name, "source_hash", c.Args.Get("source_hash"),
		"source_hash_name", c.Args.Get("source_hash_name"), "user", user, "group", group, "mode", "0600",
		"template", c.Args.Get("template"), "context", c.Args.Get("context"), "defaults", c.Args.Get("defaults"),
		"backup", c.Args.Get("backup"))
	for _, it := range c.Args.CleanKwargs().Items() {
		if !args.Has(payload.KeyString(it.Key)) {
			args.SetKey(it.Key, it.Value)
		}
	}
	mc := *c
	bound, err := modules.BindKeywords(fileManagedSpec(), args)
	if err != nil {
		return ret, err
	}
	mc.Args = bound
	mret, err := fileManagedState(ctx, &mc)
	if err != nil {
		return ret, err
	}
	ret.Result, ret.Changes = mret.Result, mret.Changes
	if ret.Changes == nil {
		ret.Changes = &payload.Map{}
	}
	if c.Test {
		// file.check_managed's answer: owner and mode of a file in the
		// temporary directory do not count.
		ret.Changes = &payload.Map{}
		if mret.Result == states.False {
			ret.Comment = mret.Comment
			return ret, nil
		}
		var b strings.Builder
		for _, it := range mret.Changes.Items() {
			switch k := payload.KeyString(it.Key); k {
			case "user", "group", "mode":
			default:
				fmt.Fprintf(&b, "%s: %s\n", k, pyfmt.Str(it.Value))
			}
		}
		if b.Len() > 0 {
			ret.Result = states.None
			ret.Comment = "The following values are set to be changed:\n" + b.String()
		} else {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("The file %s is in the correct state", cronPath)
		}
		return ret, nil
	}
	if ret.Changes.Has("diff") {
		res, err := sbExec(ctx, c, "cron.write_cron_file_verbose", []any{user, cronPath}, nil)
		if err != nil {
			return ret, err
		}
		m, _ := res.(*payload.Map)
		if rc, _ := m.Int("retcode"); rc == 0 {
			ret.Comment = fmt.Sprintf("Crontab for user %s was updated", pyfmt.Str(user))
			ret.Result = states.True
		} else {
			ret.Comment = fmt.Sprintf("Unable to update user %s crontab %s. Error: %s", pyfmt.Str(user), cronPath, m.Str("stderr"))
			ret.Result = states.False
			ret.Changes = &payload.Map{}
		}
	} else if ret.Result == states.True {
		ret.Comment = fmt.Sprintf("Crontab for user %s is in the correct state", pyfmt.Str(user))
		ret.Changes = &payload.Map{}
	} else {
		ret.Comment = mret.Comment
	}
	return ret, nil
}
