// Package runner is Salt's virt runner (salt/runners/virt.py) for
// gsalt-master; it lives apart from package virt so that the minion side
// does not link the master's runner registry and job cache.
//
// Runner functions (Salt's salt/runners/virt.py): hypervisors are the
// minions with the grain virtual:physical; every action is a job on the
// hypervisor that holds the guest.
//
// gsalt differences, all on Salt bugs or safety:
//   - init fails ("fail") when the hypervisor's virt.init returns an error
//     (Salt only checks for False) and then removes the key it
//     pre-accepted;
//   - init passes hypervisor= only when given: Salt's runner default kvm
//     fails on hosts without KVM, and virt.init picks kvm anyway when the
//     host has it;
//   - init takes config= (a dict merged into the seeded minion config, the
//     config= of virt.init), for a guest that reaches the master at
//     another address than its hypervisor does;
//   - purge does not delete the directories holding the disks (Salt's runner
//     passes dirs=True, deleting every other guest's disk in the same
//     images directory);
//   - the host with the most free memory is chosen in minion id order when
//     tied (Salt: in the order the answers arrive);
//   - init and purge fire salt/cloud/<name>/creating|created and
//     destroying|destroyed events (salt-cloud's tags; Salt 3006's virt
//     runner fires none). Their data: name, host (the hypervisor), event
//     (salt-cloud's text), and on created, destroying and destroyed macs,
//     the guest's MAC addresses (virt.get_macs on the hypervisor after
//     init; the NICs virt.full_info listed before purge), so a reactor
//     can give the guest a DHCP/DNS reservation before it boots
//     (examples/dnsmasq's reactor/cloud.sls). A failed init fires
//     salt/cloud/<name>/failed with error.
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// jobTimeout is the timeout Salt's runner gives virt.* jobs.
const jobTimeout = 600 * time.Second

// RunnerFunctions returns the virt.* runners.
func RunnerFunctions() []runners.Runner {
	p := func(name string, def any) runners.Param { return runners.Param{Name: name, Default: def} }
	r := func(name string) runners.Param { return runners.Param{Name: name, Required: true} }
	return []runners.Runner{
		{Name: "virt.query", Params: []runners.Param{p("host", nil), p("quiet", false)}, Fn: runQuery,
			Doc: "Query the virtual machines. When called without options all hosts\nare detected and a full query is returned. A single host can be\npassed in to specify an individual host to query."},
		{Name: "virt.list", Params: []runners.Param{p("host", nil), p("quiet", false), p("hyper", nil)}, Fn: runList,
			Doc: "List the virtual machines on each host, this is a simplified query,\nshowing only the virtual machine names belonging to each host.\nA single host can be passed in to specify an individual host\nto list."},
		{Name: "virt.next_host", Fn: runNextHost,
			Doc: "Return the host to use for the next autodeployed VM. This queries\nthe available host and executes some math the determine the most\n\"available\" next host."},
		{Name: "virt.host_info", Params: []runners.Param{p("host", nil)}, Fn: runHostInfo,
			Doc: "Return information about the host connected to this master"},
		{Name: "virt.init", Fn: runInit, Params: []runners.Param{r("name"), r("cpu"), r("mem"), r("image"), p("hypervisor", nil), p("host", nil),
			p("seed", true), p("nic", "default"), p("install", true), p("start", true), p("disk", "default"), p("saltenv", "base"),
			p("enable_vnc", false), p("seed_cmd", "seed.apply"), p("enable_qcow", false), p("serial_type", "None"), p("config", nil)},
			Doc: "This routine is used to create a new virtual machine. This routines takes\na number of options to determine what the newly created virtual machine\nwill look like.\n\nCLI Example:\n\n    salt-run virt.init vm_name 4 512 salt://path/to/image.raw"},
		{Name: "virt.vm_info", Params: []runners.Param{r("name"), p("quiet", false)}, Fn: runVMInfo,
			Doc: "Return the information on the named VM"},
		{Name: "virt.reset", Params: []runners.Param{r("name")}, Fn: vmAction("virt.reset", "reset", "", nil),
			Doc: "Force power down and restart an existing VM"},
		{Name: "virt.start", Params: []runners.Param{r("name")}, Fn: vmAction("virt.start", "start", "running", nil),
			Doc: "Start a named virtual machine"},
		{Name: "virt.force_off", Params: []runners.Param{r("name")}, Fn: vmAction("virt.stop", "destroy", "shutdown", nil),
			Doc: "Force power down the named virtual machine"},
		{Name: "virt.pause", Params: []runners.Param{r("name")}, Fn: vmAction("virt.pause", "pause", "paused", nil),
			Doc: "Pause the named VM"},
		{Name: "virt.resume", Params: []runners.Param{r("name")}, Fn: vmAction("virt.resume", "pause", "!paused", nil),
			Doc: "Resume a paused VM"},
		{Name: "virt.purge", Params: []runners.Param{r("name"), p("delete_key", true)}, Fn: runPurge,
			Doc: "Destroy the named VM"},
		{Name: "virt.migrate", Params: []runners.Param{r("name"), p("target", "")}, Fn: runMigrate,
			Doc: "Migrate a VM from one host to another. This routine will just start\nthe migration and display information on how to look up the progress."},
	}
}

func progress(c *runners.Call, kv ...any) {
	if c.Progress != nil {
		c.Progress(payload.NewMap(kv...))
	}
}

// fire sends an event on the master bus when the master offers it.
func fire(c *runners.Call, tag string, data *payload.Map) {
	ee, ok := c.Env.(runners.EventEnv)
	if !ok {
		return
	}
	if err := ee.FireEvent(tag, data); err != nil {
		c.Log.Warn("virt runner: event not sent", "tag", tag, "err", err)
	}
}

// query returns each hypervisor's virt.full_info (or fun) return that is
// a dict, by minion id.
func queryHosts(ctx context.Context, c *runners.Call, fun, host string) (map[string]*payload.Map, []string, error) {
	res, err := c.Env.RunJob(ctx, runners.Job{Tgt: "virtual:physical", TgtType: "grain", Fun: fun})
	if errors.Is(err, runners.ErrNoMinions) {
		return map[string]*payload.Map{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*payload.Map{}
	var ids []string
	for id, r := range res.Returns {
		if host != "" && id != host {
			continue
		}
		v, _ := r.Get("return")
		if m, ok := v.(*payload.Map); ok {
			out[id] = m
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return out, ids, nil
}

func optHost(c *runners.Call) string {
	if v := c.Args["host"]; payload.Truthy(v) {
		return payload.Text(v)
	}
	return ""
}

func runQuery(ctx context.Context, c *runners.Call) (any, error) {
	data, ids, err := queryHosts(ctx, c, "virt.full_info", optHost(c))
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap()
	for _, id := range ids {
		ret.Set(id, data[id])
		if !c.Bool("quiet") {
			progress(c, "data", payload.NewMap(id, data[id]), "outputter", "virt_query")
		}
	}
	return ret, nil
}

func runList(ctx context.Context, c *runners.Call) (any, error) {
	data, ids, err := queryHosts(ctx, c, "virt.vm_info", optHost(c))
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap()
	for _, id := range ids {
		states := payload.NewMap()
		for _, it := range data[id].Items() {
			vm := asMap(it.Value)
			st := payload.Text(val(vm, "state"))
			l, _ := states.Get(st)
			list, _ := l.([]any)
			states.Set(st, append(list, it.Key))
		}
		ret.Set(id, states)
		if !c.Bool("quiet") {
			progress(c, "data", payload.NewMap(id, states), "outputter", "nested")
		}
	}
	return ret, nil
}

// freeMemOf is comps.get("freemem", 0) as a number.
func freeMemOf(m *payload.Map) float64 {
	switch x := val(m, "freemem").(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	}
	if n, ok := payload.AsInt(val(m, "freemem")); ok {
		return float64(n)
	}
	return 0
}

// determineHost is _determine_host: the most free memory.
func determineHost(data map[string]*payload.Map, ids []string, omit string) string {
	host, best := "", 0.0
	for _, id := range ids {
		if id == omit {
			continue
		}
		if f := freeMemOf(data[id]); f > best {
			best, host = f, id
		}
	}
	return host
}

func runNextHost(ctx context.Context, c *runners.Call) (any, error) {
	data, ids, err := queryHosts(ctx, c, "virt.full_info", "")
	if err != nil {
		return nil, err
	}
	return determineHost(data, ids, ""), nil
}

func runHostInfo(ctx context.Context, c *runners.Call) (any, error) {
	data, ids, err := queryHosts(ctx, c, "virt.full_info", optHost(c))
	if err != nil {
		return nil, err
	}
	ret := payload.NewMap()
	for _, id := range ids {
		m := data[id].Clone()
		m.Delete("vm_info")
		ret.Set(id, m)
	}
	progress(c, "data", ret, "outputter", "nested")
	return ret, nil
}

// findVM is _find_vm: {host: {name: info}} or empty.
func findVM(name string, data map[string]*payload.Map, ids []string) (string, *payload.Map) {
	for _, id := range ids {
		if vms := asMap(val(data[id], "vm_info")); vms != nil {
			if info := asMap(val(vms, name)); info != nil {
				return id, info
			}
		}
	}
	return "", nil
}

func runVMInfo(ctx context.Context, c *runners.Call) (any, error) {
	data, ids, err := queryHosts(ctx, c, "virt.full_info", "")
	if err != nil {
		return nil, err
	}
	host, info := findVM(c.Str("name"), data, ids)
	if host == "" {
		return payload.NewMap(), nil
	}
	ret := payload.NewMap(host, payload.NewMap(c.Str("name"), info))
	if !c.Bool("quiet") {
		progress(c, "data", ret, "outputter", "nested")
	}
	return ret, nil
}

// validMinionID keeps key file names inside pki_dir/minions.
var validMinionID = regexp.MustCompile(`^[^/\\\x00]+$`)

func runInit(ctx context.Context, c *runners.Call) (any, error) {
	name := c.Str("name")
	if !validMinionID.MatchString(name) || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: invalid VM name %q", runners.ErrArguments, name)
	}
	progress(c, "message", "Searching for hosts")
	data, ids, err := queryHosts(ctx, c, "virt.full_info", optHost(c))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if vms := asMap(val(data[id], "vm_info")); vms != nil && vms.Has(name) {
			progress(c, "message", fmt.Sprintf("Virtual machine %s is already deployed", name))
			return "fail", nil
		}
	}
	host := optHost(c)
	if host == "" {
		host = determineHost(data, ids, "")
	}
	if _, ok := data[host]; !ok || host == "" {
		progress(c, "message", fmt.Sprintf("Host %s was not found", host))
		return "fail", nil
	}
	var pubKey, privKey any
	keyFile := ""
	if c.Bool("seed") {
		progress(c, "message", "Minion will be preseeded")
		k, err := crypt.GenerateKey(2048)
		if err != nil {
			return nil, err
		}
		privKey, pubKey = string(crypt.MarshalPrivateKeyPEM(k)), string(crypt.MarshalPublicKeyPEM(&k.PublicKey))
		pki, _ := c.Env.Opt("pki_dir")
		if !payload.Truthy(pki) {
			return nil, errors.New("virt.init: the master has no pki_dir")
		}
		keyFile = filepath.Join(payload.Text(pki), "minions", name)
		if err := os.WriteFile(keyFile, []byte(pubKey.(string)), 0o644); err != nil {
			return nil, fmt.Errorf("virt.init: pre-accept the key of %s: %w", name, err)
		}
	}
	fire(c, "salt/cloud/"+name+"/creating", payload.NewMap("name", name, "host", host, "event", "starting create"))
	progress(c, "message", fmt.Sprintf("Creating VM %s on host %s", name, host))
	kw := payload.NewMap("__kwarg__", true, "image", c.Args["image"], "nic", c.Args["nic"], "start", c.Args["start"],
		"disk", c.Args["disk"], "saltenv", c.Args["saltenv"], "seed", c.Args["seed"], "install", c.Args["install"],
		"pub_key", pubKey, "priv_key", privKey, "seed_cmd", c.Args["seed_cmd"], "enable_vnc", c.Args["enable_vnc"],
		"enable_qcow", c.Args["enable_qcow"], "serial_type", c.Args["serial_type"])
	if v := c.Args["hypervisor"]; payload.Truthy(v) {
		kw.Set("hypervisor", v)
	}
	if v := c.Args["config"]; payload.Truthy(v) {
		kw.Set("config", v)
	}
	res, err := c.Env.RunJob(ctx, runners.Job{Tgt: host, Fun: "virt.init", Arg: []any{name, c.Args["cpu"], c.Args["mem"], kw}, Timeout: jobTimeout})
	failed := func(why string) (any, error) {
		if keyFile != "" {
			if err := c.Env.DeleteKey(name); err != nil {
				c.Log.Warn("virt.init: cannot remove the pre-accepted key", "id", name, "err", err)
			}
		}
		progress(c, "message", fmt.Sprintf("VM %s was not initialized.", name), "error", why)
		fire(c, "salt/cloud/"+name+"/failed", payload.NewMap("name", name, "host", host, "error", why))
		return "fail", nil
	}
	if err != nil {
		return failed(err.Error())
	}
	r, ok := res.Returns[host]
	if !ok {
		return failed("no answer from " + host)
	}
	ret, _ := r.Get("return")
	if ret != true {
		return failed(fmt.Sprint(payload.Text(ret)))
	}
	progress(c, "message", fmt.Sprintf("VM %s initialized on host %s", name, host))
	fire(c, "salt/cloud/"+name+"/created", payload.NewMap("name", name, "host", host, "event", "created instance",
		"macs", guestMACs(ctx, c, host, name)))
	return "good", nil
}

// guestMACs is the hypervisor's virt.get_macs for the guest (an empty
// list when it gives none).
func guestMACs(ctx context.Context, c *runners.Call, host, name string) []any {
	macs := []any{}
	res, err := c.Env.RunJob(ctx, runners.Job{Tgt: host, Fun: "virt.get_macs", Arg: []any{name}, Timeout: jobTimeout})
	if err != nil {
		c.Log.Warn("virt.init: cannot read the guest's MAC addresses", "name", name, "err", err)
		return macs
	}
	if r, ok := res.Returns[host]; ok {
		v, _ := r.Get("return")
		if l, ok := v.([]any); ok {
			for _, m := range l {
				if s, ok := m.(string); ok {
					macs = append(macs, s)
				}
			}
		}
	}
	return macs
}

// vmAction runs fun on the VM's hypervisor like reset/start/force_off/
// pause/resume; state is the state that makes the action refused ("!x":
// any state but x).
func vmAction(fun, verb, state string, _ any) runners.Func {
	return func(ctx context.Context, c *runners.Call) (any, error) {
		name := c.Str("name")
		data, ids, err := queryHosts(ctx, c, "virt.full_info", "")
		if err != nil {
			return nil, err
		}
		host, info := findVM(name, data, ids)
		if host == "" {
			progress(c, "error", fmt.Sprintf("Failed to find VM %s to %s", name, verb))
			if fun == "virt.resume" {
				return "not found", nil
			}
			return "fail", nil
		}
		cur := payload.Text(val(info, "state"))
		if state != "" && ((state[0] == '!' && cur != state[1:]) || (state[0] != '!' && cur == state)) {
			progress(c, "error", fmt.Sprintf("VM %s is in state %s", name, cur))
			return "bad state", nil
		}
		res, err := c.Env.RunJob(ctx, runners.Job{Tgt: host, Fun: fun, Arg: []any{name}, Timeout: jobTimeout})
		if err != nil {
			return fmt.Sprintf("Virtual machine %s could not be handled: %v", name, err), nil
		}
		ret := payload.NewMap()
		for id, r := range res.Returns {
			v, _ := r.Get("return")
			rc, _ := r.Get("retcode")
			ret.Set(id, payload.NewMap("ret", v, "retcode", rc, "jid", res.JID))
		}
		progress(c, "message", fmt.Sprintf("%s VM %s", actionVerb(fun), name))
		if fun == "virt.reset" {
			return ret, nil
		}
		return "good", nil
	}
}

func actionVerb(fun string) string {
	switch fun {
	case "virt.reset":
		return "Reset"
	case "virt.start":
		return "Started"
	case "virt.stop":
		return "Powered off"
	case "virt.pause":
		return "Paused"
	case "virt.resume":
		return "Resumed"
	}
	return fun
}

func runPurge(ctx context.Context, c *runners.Call) (any, error) {
	name := c.Str("name")
	data, ids, err := queryHosts(ctx, c, "virt.full_info", "")
	if err != nil {
		return nil, err
	}
	host, info := findVM(name, data, ids)
	if host == "" {
		progress(c, "error", fmt.Sprintf("Failed to find VM %s to purge", name))
		return "fail", nil
	}
	macs := []any{}
	if nics := asMap(val(info, "nics")); nics != nil {
		for _, it := range nics.Items() {
			macs = append(macs, it.Key)
		}
	}
	fire(c, "salt/cloud/"+name+"/destroying", payload.NewMap("name", name, "host", host, "event", "destroying instance", "macs", macs))
	res, err := c.Env.RunJob(ctx, runners.Job{Tgt: host, Fun: "virt.purge", Arg: []any{name}, Timeout: jobTimeout})
	if err != nil {
		return fmt.Sprintf("Virtual machine %s could not be purged: %v", name, err), nil
	}
	if r, ok := res.Returns[host]; ok {
		if v, _ := r.Get("return"); v != true {
			progress(c, "error", fmt.Sprintf("Failed to purge VM %s: %s", name, payload.Text(v)))
			return "fail", nil
		}
	}
	if c.Bool("delete_key") {
		if err := c.Env.DeleteKey(name); err != nil {
			c.Log.Warn("virt.purge: cannot delete the key", "id", name, "err", err)
		}
	}
	progress(c, "message", fmt.Sprintf("Purged VM %s", name))
	fire(c, "salt/cloud/"+name+"/destroyed", payload.NewMap("name", name, "host", host, "event", "destroyed instance", "macs", macs))
	return "good", nil
}

func runMigrate(ctx context.Context, c *runners.Call) (any, error) {
	name := c.Str("name")
	data, ids, err := queryHosts(ctx, c, "virt.full_info", "")
	if err != nil {
		return nil, err
	}
	origin, info := findVM(name, data, ids)
	if origin == "" {
		progress(c, "error", fmt.Sprintf("Named VM %s was not found to migrate", name))
		return "", nil
	}
	target := c.Str("target")
	if target == "" {
		target = determineHost(data, ids, origin)
	}
	if _, ok := data[target]; !ok {
		progress(c, "error", fmt.Sprintf("Target host %s not found", target))
		return "", nil
	}
	if _, err := c.Env.RunJob(ctx, runners.Job{Tgt: target, Fun: "virt.seed_non_shared_migrate", Arg: []any{val(info, "disks"), true}, Timeout: jobTimeout}); err != nil {
		return fmt.Sprintf("Virtual machine %s could not be migrated: %v", name, err), nil
	}
	kw := payload.NewMap("__kwarg__", true, "copy_storage", "all")
	res, err := c.Env.RunJob(ctx, runners.Job{Tgt: origin, Fun: "virt.migrate", Arg: []any{name, target, kw}, Timeout: jobTimeout})
	if err != nil {
		return fmt.Sprintf("Virtual machine %s could not be migrated: %v", name, err), nil
	}
	msg := fmt.Sprintf("The migration of virtual machine %s to host %s has begun, and can be tracked via jid %s. The ``salt-run virt.query`` runner can also be used, the target VM will be shown as paused until the migration is complete.", name, target, res.JID)
	progress(c, "message", msg)
	if r, ok := res.Returns[origin]; ok {
		v, _ := r.Get("return")
		if v != true {
			progress(c, "error", payload.Text(v))
		}
	}
	return "", nil
}

// asMap is v as a map (nil when it is not one).
func asMap(v any) *payload.Map {
	m, _ := v.(*payload.Map)
	return m
}

// val is m[key] or nil (also for a nil map).
func val(m *payload.Map, key string) any {
	if m == nil {
		return nil
	}
	v, _ := m.Get(key)
	return v
}
