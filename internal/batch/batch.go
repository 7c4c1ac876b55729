// Package batch holds what Salt's batch runs (salt/cli/batch.py) decide
// the same way wherever gsalt runs a batch: the gsalt CLI's -b, orchestrate's
// salt.state/salt.function batch argument.
package batch

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrBadSize is a batch size that is neither a count ("3") nor a
// percentage ("10%"); Salt prints "Invalid batch data sent".
var ErrBadSize = errors.New("invalid batch size")

// Size is salt.cli.batch.get_bnum: how many minions run at once for spec
// ("10" or "10%") out of n responding minions. A percentage that comes to
// less than one minion rounds up (to 1, or 0 for 0%); otherwise it is
// truncated.
func Size(spec string, n int) (int, error) {
	s := strings.TrimSpace(spec)
	if strings.Contains(s, "%") {
		f, err := strconv.ParseFloat(strings.Trim(s, "%"), 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q", ErrBadSize, spec)
		}
		res := f / 100 * float64(n)
		if res < 1 {
			return int(math.Ceil(res)), nil
		}
		return int(res), nil
	}
	b, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrBadSize, spec)
	}
	return b, nil
}
