package saltlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/pytime"
)

// lockedWriter serialises whole lines to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// levelWriter is a writer that also takes the record's level (syslog).
type levelWriter interface {
	WriteLevel(l slog.Level, line string) error
}

// handler formats records with a Python logging format.
type handler struct {
	out      io.Writer
	syslog   bool
	level    slog.Level
	format   []fmtPart
	datefmt  string
	granular map[string]slog.Level
	min      slog.Level // lowestLevel of level and granular, set by withMin
	pid      int
	attrs    []slog.Attr
	group    string
	name     string // from a "component" attribute added with WithAttrs
}

// withMin sets h.min from h.level and h.granular (which never change once
// the handler is built; clones keep it) and returns h. Enabled runs for
// every guarded log call, several per job in a swarm's identities, and
// then reads a field instead of ranging over the granular levels.
func (h *handler) withMin() *handler {
	h.min = h.level
	for _, l := range h.granular {
		h.min = min(h.min, l)
	}
	return h
}

// Enabled reports whether any logger of h writes level l.
func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

// levelFor is the level of logger name: the longest granular prefix, else
// the handler's level.
func (h *handler) levelFor(name string) slog.Level {
	best, lv := -1, h.level
	for k, l := range h.granular {
		if (name == k || strings.HasPrefix(name, k+".")) && len(k) > best {
			best, lv = len(k), l
		}
	}
	return lv
}

func (h *handler) clone() *handler {
	c := *h
	c.attrs = append([]slog.Attr(nil), h.attrs...)
	return &c
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := h.clone()
	for _, a := range as {
		if a.Key == "component" && h.group == "" {
			c.name = a.Value.String()
			continue
		}
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := h.clone()
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return c
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	name := "gsalt"
	comp := h.name
	var extra []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "component" && h.group == "" {
			comp = a.Value.String()
			return true
		}
		if h.group != "" {
			a.Key = h.group + "." + a.Key
		}
		extra = append(extra, a)
		return true
	})
	if comp != "" {
		name += "." + comp
	}
	if r.Level < h.levelFor(name) {
		return nil
	}
	var msg strings.Builder
	msg.WriteString(r.Message)
	for _, a := range append(append([]slog.Attr(nil), h.attrs...), extra...) {
		writeAttr(&msg, "", a)
	}
	rec := logRecord{r: r, name: name, msg: msg.String(), pid: h.pid, datefmt: h.datefmt}
	line := render(h.format, &rec)
	if lw, ok := h.out.(levelWriter); ok {
		return lw.WriteLevel(r.Level, line)
	}
	_, err := io.WriteString(h.out, line+"\n")
	return err
}

// writeAttr appends " key=value" (groups flattened with dots).
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeAttr(b, key, g)
		}
		return
	}
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(" " + key + "=" + v)
}

// logRecord is what a format's %(key)s fields read.
type logRecord struct {
	r       slog.Record
	name    string
	msg     string
	pid     int
	datefmt string
	frame   *runtime.Frame
}

func (lr *logRecord) source() runtime.Frame {
	if lr.frame == nil {
		fs := runtime.CallersFrames([]uintptr{lr.r.PC})
		f, _ := fs.Next()
		lr.frame = &f
	}
	return *lr.frame
}

// field returns the value of a format key: a string or an int.
func (lr *logRecord) field(key string) (any, bool) {
	switch key {
	case "name":
		return lr.name, true
	case "levelname":
		return levelName(lr.r.Level), true
	case "levelno":
		return int(lr.r.Level)*5/2 + 20, true
	case "message", "colormsg":
		return lr.msg, true
	case "asctime":
		return pytime.Strftime(lr.r.Time, lr.datefmt), true
	case "msecs":
		return lr.r.Time.Nanosecond() / 1e6, true
	case "created":
		return float64(lr.r.Time.UnixNano()) / 1e9, true
	case "process":
		return lr.pid, true
	case "processName":
		return "MainProcess", true
	case "thread":
		return 0, true
	case "threadName":
		return "MainThread", true
	case "lineno":
		return lr.source().Line, true
	case "pathname":
		return lr.source().File, true
	case "filename":
		return filepath.Base(lr.source().File), true
	case "module":
		return strings.TrimSuffix(filepath.Base(lr.source().File), ".go"), true
	case "funcName":
		fn := lr.source().Function
		return fn[strings.LastIndexByte(fn, '.')+1:], true
	case "bracketname", "colorname":
		return fmt.Sprintf("[%-17s]", lr.name), true
	case "bracketlevel", "colorlevel":
		return fmt.Sprintf("[%-8s]", levelName(lr.r.Level)), true
	case "bracketprocess", "colorprocess":
		return fmt.Sprintf("[%5d]", lr.pid), true
	case "jid":
		return "", true
	}
	return nil, false
}

// fmtPart is literal text or one %(key)spec field.
type fmtPart struct {
	lit  string
	key  string
	spec string // Python's flags, width, precision and type: "-8s", "03d"
}

// parseFormat parses a Python logging %-format; an unknown key or a
// malformed field is an error, as Python's logging reports.
func parseFormat(f string) ([]fmtPart, error) {
	var parts []fmtPart
	var lit strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		if i+1 >= len(f) || f[i+1] != '(' {
			return nil, fmt.Errorf("invalid format %q: only %%(name)s fields are supported", f)
		}
		end := strings.IndexByte(f[i:], ')')
		if end < 0 {
			return nil, fmt.Errorf("invalid format %q: unterminated %%(", f)
		}
		key := f[i+2 : i+end]
		j := i + end + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.", f[j]) >= 0 {
			j++
		}
		if j >= len(f) || strings.IndexByte("sdirfgeExX", f[j]) < 0 {
			return nil, fmt.Errorf("invalid format %q: bad conversion after %%(%s)", f, key)
		}
		if _, ok := (&logRecord{}).fieldName(key); !ok {
			return nil, fmt.Errorf("invalid format %q: unknown field %q", f, key)
		}
		if lit.Len() > 0 {
			parts = append(parts, fmtPart{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, fmtPart{key: key, spec: f[i+end+1 : j+1]})
		i = j
	}
	if lit.Len() > 0 {
		parts = append(parts, fmtPart{lit: lit.String()})
	}
	return parts, nil
}

// fieldName reports whether key is a known field (without a record).
func (lr *logRecord) fieldName(key string) (string, bool) {
	switch key {
	case "name", "levelname", "levelno", "message", "colormsg", "asctime", "msecs", "created",
		"process", "processName", "thread", "threadName", "lineno", "pathname", "filename",
		"module", "funcName", "bracketname", "colorname", "bracketlevel", "colorlevel",
		"bracketprocess", "colorprocess", "jid":
		return key, true
	}
	return "", false
}

// render formats a record.
func render(parts []fmtPart, lr *logRecord) string {
	var b strings.Builder
	for _, p := range parts {
		if p.key == "" {
			b.WriteString(p.lit)
			continue
		}
		v, _ := lr.field(p.key)
		b.WriteString(pyPercent(p.spec, v))
	}
	return b.String()
}

// pyPercent applies one Python %-conversion spec (flags, width,
// precision, type) to v.
func pyPercent(spec string, v any) string {
	conv := spec[len(spec)-1]
	flags := spec[:len(spec)-1]
	goSpec := "%" + flags
	switch conv {
	case 's', 'r':
		return fmt.Sprintf(goSpec+"s", fmt.Sprint(v))
	case 'd', 'i':
		switch x := v.(type) {
		case int:
			return fmt.Sprintf(goSpec+"d", x)
		case float64:
			return fmt.Sprintf(goSpec+"d", int64(x))
		}
		return fmt.Sprintf(goSpec+"s", fmt.Sprint(v))
	case 'x', 'X':
		if x, ok := v.(int); ok {
			return fmt.Sprintf(goSpec+string(conv), x)
		}
	case 'f', 'g', 'e', 'E':
		switch x := v.(type) {
		case int:
			return fmt.Sprintf(goSpec+string(conv), float64(x))
		case float64:
			return fmt.Sprintf(goSpec+string(conv), x)
		}
	}
	return fmt.Sprint(v)
}
