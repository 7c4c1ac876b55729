package driver

import (
	"context"
	"fmt"
	"strings"
)

// arpSpec is how a CLI platform's get_arp_table reads its ARP table: the
// command, how the text splits into rows of columns, which column holds
// what, and how the age and MAC columns convert.
type arpSpec struct {
	all, vrf string // the command, without and with a VRF (%s)
	// show runs the command (nil: runner.show).
	show func(o runner, cmd string) (string, error)
	// rows splits the output into the table's rows of columns.
	rows func(o runner, cmd, out string) ([][]string, error)
	// ip, age, mac, iface index a row's columns (a column beyond the
	// row is "").
	ip, age, mac, iface int
	ageOf               func(string) float64
	macOf               func(string) string
}

// lineRows is an arpSpec.rows that keeps the lines row accepts (row
// returns nil for the others).
func lineRows(row func(line string) []string) func(runner, string, string) ([][]string, error) {
	return func(_ runner, _, out string) ([][]string, error) {
		var rows [][]string
		for l := range strings.SplitSeq(out, "\n") {
			if r := row(l); r != nil {
				rows = append(rows, r)
			}
		}
		return rows, nil
	}
}

// getARPTable implements Driver.GetArpTable by spec.
func getARPTable(ctx context.Context, s *session, spec *arpSpec, vrf string) ([]ARPEntry, error) {
	if err := safeArg(s, "vrf", vrf); err != nil {
		return nil, err
	}
	res := []ARPEntry{}
	err := s.query(ctx, func(o runner) error {
		cmd := spec.all
		if vrf != "" {
			cmd = fmt.Sprintf(spec.vrf, vrf)
		}
		show := spec.show
		if show == nil {
			show = runner.show
		}
		out, err := show(o, cmd)
		if err != nil {
			return err
		}
		rows, err := spec.rows(o, cmd, out)
		if err != nil {
			return err
		}
		col := func(r []string, i int) string {
			if i < len(r) {
				return r[i]
			}
			return ""
		}
		for _, r := range rows {
			res = append(res, ARPEntry{Interface: col(r, spec.iface), MAC: spec.macOf(col(r, spec.mac)),
				IP: col(r, spec.ip), Age: spec.ageOf(col(r, spec.age))})
		}
		return nil
	})
	return res, err
}
