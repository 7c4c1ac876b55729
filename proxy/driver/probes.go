package driver

import (
	"context"
	"regexp"
	"strconv"
)

// ProbeTest is one test of NAPALM get_probes_config.
type ProbeTest struct {
	ProbeType    string `json:"probe_type"`
	Target       string `json:"target"`
	Source       string `json:"source"`
	ProbeCount   int    `json:"probe_count"`
	TestInterval int    `json:"test_interval"`
}

// ProbesConfigGetter is implemented by drivers with get_probes_config:
// probe name -> test name -> test.
type ProbesConfigGetter interface {
	GetProbesConfig(ctx context.Context) (map[string]map[string]ProbeTest, error)
}

// ProbesResultsGetter is implemented by drivers with get_probes_results:
// probe name -> test name -> NAPALM's ProbeTestResultDict.
type ProbesResultsGetter interface {
	GetProbesResults(ctx context.Context) (map[string]map[string]map[string]any, error)
}

var (
	iosSLARe = regexp.MustCompile(`ip\s+sla\s+(?P<id>\d+)\n\s+(?P<type>\S+)\s+(?P<args>.*)\n\s+tag\s+(?P<name>[\S ]+)\n(\s+.*\n)*((\s+frequency\s+(?P<interval0>\d+)\n(\s+.*\n)*\s+history\s+buckets-kept\s+(?P<count0>\d+))|(\s+history\s+buckets-kept\s+(?P<count1>\d+)\n.*\s+frequency\s+(?P<interval1>\d+)))`)
	// iosSLAArgs are the arguments of the probe types NAPALM ios reads,
	// with the NAPALM probe type they map to.
	iosSLAArgs = map[string]struct {
		re   *regexp.Regexp
		name string
	}{
		"icmp-echo": {regexp.MustCompile(`^(?P<target>\S+)\s+source-(?:ip|interface)\s+(?P<source>\S+)$`), "icmp-ping"},
	}
)

// GetProbesConfig implements ProbesConfigGetter like NAPALM ios: the IP SLA
// operations of show run | section ip sla [0-9] with a tag (the test name);
// only icmp-echo operations.
func (d *iosDriver) GetProbesConfig(ctx context.Context) (map[string]map[string]ProbeTest, error) {
	var res map[string]map[string]ProbeTest
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show run | section ip sla [0-9]")
		if err != nil {
			return err
		}
		res = parseIOSProbes(iosPostprocess(out) + "\n")
		return nil
	})
	return res, err
}

func parseIOSProbes(out string) map[string]map[string]ProbeTest {
	res := map[string]map[string]ProbeTest{}
	g := func(m []string, n string) string { return m[iosSLARe.SubexpIndex(n)] }
	for _, m := range iosSLARe.FindAllStringSubmatch(out, -1) {
		a, ok := iosSLAArgs[g(m, "type")]
		if !ok {
			continue
		}
		am := a.re.FindStringSubmatch(g(m, "args"))
		if am == nil {
			continue
		}
		count, interval := g(m, "count0"), g(m, "interval0")
		if count == "" {
			count = g(m, "count1")
		}
		if interval == "" {
			interval = g(m, "interval1")
		}
		c, _ := strconv.Atoi(count)
		iv, _ := strconv.Atoi(interval)
		res[g(m, "id")] = map[string]ProbeTest{g(m, "name"): {ProbeType: a.name, Target: am[1], Source: am[2], ProbeCount: c, TestInterval: iv}}
	}
	return res
}
