package runners

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrDate means a time given to jobs.list_jobs (start_time, end_time) is
// not one python-dateutil's parser understands.
var ErrDate = errors.New("runners: unknown date format")

// dateutilTime is a parsed time: naive (no zone given, as dateutil returns
// it) or aware (a zone or offset was given; Time is then in UTC).
type dateutilTime struct {
	Time  time.Time
	Aware bool
}

var (
	reISOT      = regexp.MustCompile(`(\d)[Tt](\d)`)
	reClock     = regexp.MustCompile(`^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?$`)
	reDateSep   = regexp.MustCompile(`^(\d{1,4})([-/.])(\d{1,2})(?:([-/.])(\d{1,4}))?$`)
	reOffset    = regexp.MustCompile(`^[+-](\d{2}):?(\d{2})?$`)
	reOrdinal   = regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th)$`)
	reClockAMPM = regexp.MustCompile(`^(\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(am|pm|a\.m\.|p\.m\.)$`)
	reAMPMHour  = regexp.MustCompile(`^(\d{1,2})(am|pm|a\.m\.|p\.m\.)$`)
	monthNames  = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dayNames    = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
)

func monthOf(w string) int {
	w = strings.ToLower(strings.TrimSuffix(w, "."))
	if len(w) < 3 {
		return 0
	}
	full := []string{"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december"}
	for i, m := range monthNames {
		if w == m || w == full[i] || (i == 8 && w == "sept") {
			return i + 1
		}
	}
	return 0
}

func isDayName(w string) bool {
	w = strings.ToLower(strings.TrimSuffix(w, "."))
	full := []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	for i, d := range dayNames {
		if w == d || w == full[i] {
			return true
		}
	}
	return false
}

// parseDateutil parses s like dateutil.parser.parse with its defaults
// (month before day, missing fields taken from today at midnight): dates
// as "2015-03-16", "2015/3/16", "03/16/2015", "20150316", "Mar 16 2015",
// "16 March 2015" or "2015, Mar 16", times as "19:00", "19:00:05.123456"
// or "7pm", ISO "T" separators, weekday names, and a "Z", "UTC", "GMT"
// or "+HH:MM" zone. Anything else wraps ErrDate, like dateutil's
// "Unknown string format".
func parseDateutil(s string, now time.Time) (dateutilTime, error) {
	bad := func() (dateutilTime, error) {
		return dateutilTime{}, fmt.Errorf("%w: Unknown string format: %s", ErrDate, s)
	}
	// ISO "T" between a date and a time.
	text := reISOT.ReplaceAllString(s, "$1 $2")
	text = strings.NewReplacer(",", " ", ";", " ").Replace(text)
	words := strings.Fields(text)
	if len(words) == 0 {
		return dateutilTime{}, fmt.Errorf("%w: String does not contain a date: %s", ErrDate, s)
	}
	year, month, day := -1, -1, -1
	hour, minute, sec, usec := -1, 0, 0, 0
	var loose []int // numbers not yet placed (day, then year)
	aware, offset := false, 0
	pm, am := false, false
	for i := 0; i < len(words); i++ {
		w := words[i]
		lw := strings.ToLower(w)
		// A time glued to an offset: "19:00+02:00", "19:00Z".
		if k := strings.IndexAny(w, "+Zz"); k > 0 && strings.Contains(w[:k], ":") {
			words = append(words[:i+1], append([]string{w[k:]}, words[i+1:]...)...)
			w, lw = w[:k], strings.ToLower(w[:k])
		}
		if m := reClockAMPM.FindStringSubmatch(lw); m != nil {
			words = append(words[:i+1], append([]string{m[2]}, words[i+1:]...)...)
			w, lw = m[1], m[1]
		}
		if k := strings.LastIndex(w, "-"); k > 0 && strings.Contains(w[:k], ":") {
			words = append(words[:i+1], append([]string{w[k:]}, words[i+1:]...)...)
			w, lw = w[:k], strings.ToLower(w[:k])
		}
		switch {
		case reClock.MatchString(w):
			m := reClock.FindStringSubmatch(w)
			hour, _ = strconv.Atoi(m[1])
			minute, _ = strconv.Atoi(m[2])
			if m[3] != "" {
				sec, _ = strconv.Atoi(m[3])
			}
			if m[4] != "" {
				frac := (m[4] + "000000")[:6]
				usec, _ = strconv.Atoi(frac)
			}
		case reAMPMHour.MatchString(lw):
			m := reAMPMHour.FindStringSubmatch(lw)
			hour, _ = strconv.Atoi(m[1])
			pm = strings.HasPrefix(m[2], "p")
			am = !pm
		case lw == "am" || lw == "a.m." || lw == "pm" || lw == "p.m.":
			if hour < 0 {
				if len(loose) == 0 {
					return bad()
				}
				hour, loose = loose[len(loose)-1], loose[:len(loose)-1]
			}
			pm = strings.HasPrefix(lw, "p")
			am = !pm
		case lw == "z" || lw == "utc" || lw == "gmt":
			aware, offset = true, 0
		case reOffset.MatchString(w) && (hour >= 0 || year >= 0):
			m := reOffset.FindStringSubmatch(w)
			h, _ := strconv.Atoi(m[1])
			mi := 0
			if m[2] != "" {
				mi, _ = strconv.Atoi(m[2])
			}
			offset = h*3600 + mi*60
			if w[0] == '-' {
				offset = -offset
			}
			aware = true
		case monthOf(w) > 0:
			if month >= 0 {
				return bad()
			}
			month = monthOf(w)
		case isDayName(w), lw == "of", lw == "at", lw == "on", lw == "and":
		case reOrdinal.MatchString(lw):
			d, _ := strconv.Atoi(reOrdinal.FindStringSubmatch(lw)[1])
			day = d
		case reDateSep.MatchString(w):
			m := reDateSep.FindStringSubmatch(w)
			if m[4] != "" && m[4] != m[2] {
				return bad()
			}
			a, _ := strconv.Atoi(m[1])
			b, _ := strconv.Atoi(m[3])
			if m[5] == "" {
				// "3/16" or "2015-03": month and day, or year and month.
				if len(m[1]) == 4 {
					year, month = a, b
				} else {
					month, day = a, b
				}
				break
			}
			c, _ := strconv.Atoi(m[5])
			switch {
			case len(m[1]) == 4 || a > 31:
				year, month, day = a, b, c
			case a > 12:
				day, month, year = a, b, c
			default:
				month, day, year = a, b, c
			}
			if len(m[5]) <= 2 && !(len(m[1]) == 4 || a > 31) {
				year = twoDigitYear(c, now)
			}
		case isDigits(w):
			n, _ := strconv.Atoi(w)
			switch len(w) {
			case 8:
				year, month, day = n/10000, n/100%100, n%100
			case 6:
				if year < 0 && month < 0 {
					year, month, day = twoDigitYear(n/10000, now), n/100%100, n%100
				} else {
					hour, minute, sec = n/10000, n/100%100, n%100
				}
			case 4:
				if year < 0 {
					year = n
				} else if hour < 0 {
					hour, minute = n/100, n%100
				} else {
					return bad()
				}
			case 1, 2:
				loose = append(loose, n)
			default:
				return bad()
			}
		default:
			return bad()
		}
	}
	for _, n := range loose {
		switch {
		case month < 0 && day >= 0 && n <= 12:
			month = n
		case day < 0 && n <= 31:
			day = n
		case year < 0:
			year = twoDigitYear(n, now)
		case month < 0 && n <= 12:
			month = n
		default:
			return bad()
		}
	}
	if year < 0 {
		year = now.Year()
	}
	if month < 0 {
		month = int(now.Month())
	}
	if day < 0 {
		day = now.Day()
	}
	if hour < 0 {
		hour = 0
	}
	if pm && hour < 12 {
		hour += 12
	}
	if am && hour == 12 {
		hour = 0
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return dateutilTime{}, fmt.Errorf("%w: %s: a value is out of range", ErrDate, s)
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, usec*1000, time.UTC)
	if t.Day() != day {
		return dateutilTime{}, fmt.Errorf("%w: %s: day is out of range for month", ErrDate, s)
	}
	if aware {
		t = t.Add(-time.Duration(offset) * time.Second)
	}
	return dateutilTime{Time: t, Aware: aware}, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// twoDigitYear maps a two-digit year into the century that puts it within
// 50 years of now, as dateutil does.
func twoDigitYear(y int, now time.Time) int {
	if y >= 100 {
		return y
	}
	century := now.Year() / 100 * 100
	y += century
	if y >= now.Year()+50 {
		y -= 100
	} else if y < now.Year()-50 {
		y += 100
	}
	return y
}
