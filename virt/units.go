package virt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

var humanSize = regexp.MustCompile(`^([0-9.]*)\s*(.*)$`)

// humanToBytes is salt.utils.stringutils.human_to_bytes with
// handle_metric: "2G", "30MB" (base ten), "64KiB"; 0 when unparsable.
func humanToBytes(v any, defUnit string) int64 {
	s := strings.TrimSpace(payload.Text(v))
	m := humanSize.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	unit := strings.ToLower(m[2])
	if unit == "" {
		unit = strings.ToLower(defUnit)
	}
	var val float64
	if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
		val = float64(n)
	} else if f, err := strconv.ParseFloat(m[1], 64); err == nil {
		val = f
	} else {
		return 0
	}
	dec := false
	if len(unit) == 2 && strings.ContainsRune("kmgtpezy", rune(unit[0])) && unit[1] == 'b' {
		dec = true
	} else if !regexp.MustCompile(`^(b|[kmgtpezy](ib)?)$`).MatchString(unit) {
		return 0
	}
	p := strings.IndexByte("bkmgtpezy", unit[0])
	if dec {
		val *= math.Pow(10, float64(p*3))
	} else {
		val *= math.Pow(2, float64(p*10))
	}
	return int64(val)
}

// handleUnit is virt's _handle_unit: bytes, "m" by default.
func handleUnit(v any) (int64, error) {
	n := humanToBytes(v, "m")
	if n == 0 {
		return 0, fmt.Errorf("%w: invalid number or unit", modules.ErrInvocation)
	}
	return n, nil
}

// toKiB is the template's to_kib.
func toKiB(v any) (int64, error) {
	n, err := handleUnit(v)
	return n / 1024, err
}
