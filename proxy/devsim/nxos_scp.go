package devsim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// rawExecFunc handles an SSH exec request that is not a CLI command (NX-OS's SCP server); it
// reports false to let the CLI run cmd instead.
type rawExecFunc func(s *shell, cmd string, rw io.ReadWriter) bool

// handleRawExec runs the platform's raw exec handler, if any; false means "run it as CLI".
func (p *platform) handleRawExec(s *shell, cmd string, rw io.ReadWriter) bool {
	return p.rawExec != nil && p.rawExec(s, cmd, rw)
}

// maxSCPHeader bounds one SCP control line.
const maxSCPHeader = 1024

var errSCP = errors.New("devsim: scp protocol error")

// nxosRawExec is NX-OS's SCP sink: "scp -t [-p] [-v] [-d] TARGET" copies one file into
// bootflash: when "feature scp-server" is configured. Anything else (including scp without the
// feature, which the CLI then rejects) runs as a CLI command.
func nxosRawExec(s *shell, cmd string, rw io.ReadWriter) bool {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "scp" {
		return false
	}
	s.dev.mu.Lock()
	enabled := s.dev.state().running.top("feature", "scp-server") != ""
	s.dev.mu.Unlock()
	if !enabled {
		return false
	}
	sink, target := false, ""
	for _, a := range f[1:] {
		switch {
		case a == "-t":
			sink = true
		case a == "-f" || a == "-r":
			scpFatal(rw, "scp: only single-file uploads (scp -t) are supported")
			return true
		case strings.HasPrefix(a, "-"):
		case target == "":
			target = a
		default:
			scpFatal(rw, "scp: ambiguous target")
			return true
		}
	}
	if !sink {
		scpFatal(rw, "scp: only single-file uploads (scp -t) are supported")
		return true
	}
	dir := target == "" || strings.EqualFold(strings.TrimRight(target, "/"), "bootflash:") || target == "."
	name := ""
	if !dir {
		n, ok := nxosPath(target)
		if !ok {
			scpFatal(rw, "scp: "+target+": "+nxosNoFile)
			return true
		}
		name = n
	}
	s.scpSink(bufio.NewReaderSize(rw, 4096), rw, name)
	return true
}

func scpFatal(w io.Writer, msg string) {
	_, _ = io.WriteString(w, "\x02"+msg+"\n")
}

// scpSink runs the sink side of the SCP protocol: "C" records write files, "T" records are
// acknowledged, directories are refused. name overrides the record's file name when set.
func (s *shell) scpSink(r *bufio.Reader, w io.Writer, name string) {
	ack := func() bool { _, err := w.Write([]byte{0}); return err == nil }
	if !ack() {
		return
	}
	for {
		line, err := readSCPLine(r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				scpFatal(w, "scp: protocol error: "+err.Error())
			}
			return
		}
		switch line[0] {
		case 'T':
			if !ack() {
				return
			}
		case 'C':
			size, recName, err := parseSCPFile(line)
			if err != nil {
				scpFatal(w, "scp: "+err.Error())
				return
			}
			dst := name
			if dst == "" {
				n, ok := nxosPath(recName)
				if !ok {
					scpFatal(w, "scp: "+recName+": invalid file name")
					return
				}
				dst = n
			}
			if size > maxFileSize {
				scpFatal(w, "scp: "+dst+": "+nxosNoSpace)
				return
			}
			if !ack() {
				return
			}
			buf := make([]byte, size+1)
			if _, err := io.ReadFull(r, buf); err != nil {
				return
			}
			if buf[size] != 0 {
				scpFatal(w, "scp: protocol error: missing end of file marker")
				return
			}
			s.dev.mu.Lock()
			msg := s.nxosPut(dst, string(buf[:size]))
			s.dev.mu.Unlock()
			if msg != "" {
				_, _ = io.WriteString(w, "\x01scp: "+dst+": "+msg+"\n")
				return
			}
			if !ack() {
				return
			}
		case 'D', 'E':
			scpFatal(w, "scp: directories are not supported")
			return
		case 0x01, 0x02:
			return // the client gave up
		default:
			scpFatal(w, "scp: protocol error: unexpected record")
			return
		}
	}
}

// readSCPLine reads one control line (without its newline), bounded by maxSCPHeader.
func readSCPLine(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for b.Len() <= maxSCPHeader {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && b.Len() > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		if c == '\n' {
			if b.Len() == 0 {
				return "", fmt.Errorf("%w: empty record", errSCP)
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("%w: record too long", errSCP)
}

// parseSCPFile parses "C0644 SIZE NAME".
func parseSCPFile(line string) (int, string, error) {
	f := strings.SplitN(line[1:], " ", 3)
	if len(f) != 3 || len(f[0]) != 4 {
		return 0, "", fmt.Errorf("%w: bad file record", errSCP)
	}
	if _, err := strconv.ParseUint(f[0], 8, 16); err != nil {
		return 0, "", fmt.Errorf("%w: bad file mode", errSCP)
	}
	size, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || size < 0 || size > 1<<40 {
		return 0, "", fmt.Errorf("%w: bad file size", errSCP)
	}
	return int(min(size, maxFileSize+1)), f[2], nil
}
