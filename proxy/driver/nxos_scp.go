package driver

import (
	"bufio"
	"context"
	"crypto/md5" //nolint:gosec // NX-OS verifies transfers with "show file ... md5sum"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// scrapligo v1.4.3 has no file transfer and keeps its crypto/ssh client unexported
// (transport.Standard.client), so candidates travel over a second SSH connection of this
// driver's own, as NAPALM's nxos_ssh (netmiko file_transfer) does: "scp -t bootflash:FILE" on
// an exec channel, then "show file bootflash:FILE md5sum" on the CLI to verify the copy. The
// host key is not checked, matching the CLI connection (scrapligo's WithAuthNoStrictKey).

// maxSCPReply bounds what is read of a refusal the device sends instead of an SCP status.
const maxSCPReply = 4096

// scpPut copies data to target ("bootflash:NAME") on the device, bounded by the operation's
// deadline and context.
func (d *nxosDriver) scpPut(o *op, target string, data []byte) error {
	s := o.s
	what := "scp " + target
	rem := time.Until(o.deadline)
	if rem <= 0 {
		o.fatal = true
		return s.errf(ErrTimeout, what, nil)
	}
	addr := net.JoinHostPort(s.o.Host, strconv.Itoa(d.scpPort))
	dialer := net.Dialer{Timeout: rem}
	conn, err := dialer.DialContext(o.ctx, "tcp", addr)
	if err != nil {
		if o.ctx.Err() != nil {
			return s.ctxErr(what, o.ctx.Err())
		}
		return s.errf(ErrConnect, what+": "+addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(o.deadline)
	stop := context.AfterFunc(o.ctx, func() { _ = conn.Close() })
	defer stop()
	fail := func(stage string, err error) error {
		switch {
		case o.ctx.Err() != nil:
			return s.ctxErr(what, o.ctx.Err())
		case !time.Now().Before(o.deadline) || isNetTimeout(err):
			return s.errf(ErrTimeout, what+": "+stage, err)
		}
		return s.errf(ErrConnect, what+": "+stage, err)
	}
	pw := s.o.Password
	cfg := &ssh.ClientConfig{
		User: s.o.Username,
		Auth: []ssh.AuthMethod{ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, _ []bool) ([]string, error) {
				ans := make([]string, len(questions))
				for i := range ans {
					ans[i] = pw
				}
				return ans, nil
			})},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec // same policy as the CLI connection
		Timeout:         rem,
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		if strings.Contains(err.Error(), "unable to authenticate") {
			return s.errf(ErrAuth, what+": login refused", err)
		}
		return fail("handshake", err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return fail("session", err)
	}
	defer sess.Close()
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fail("session", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return fail("session", err)
	}
	if err := sess.Start("scp -t " + target); err != nil {
		return fail("start", err)
	}
	r := bufio.NewReader(stdout)
	ack := func(stage string) error {
		b, err := r.ReadByte()
		if err != nil {
			return fail(stage, err)
		}
		if b == 0 {
			return nil
		}
		rest := make([]byte, maxSCPReply)
		n, _ := io.ReadFull(io.LimitReader(r, maxSCPReply), rest)
		msg := string(rest[:n])
		if b <= 2 {
			msg, _, _ = strings.Cut(msg, "\n")
		} else {
			msg = string(b) + msg // not an SCP status: the CLI answered (no scp server)
		}
		return s.errf(ErrCommand, what, fmt.Errorf("could not transfer file: %s", deviceMessage(msg)))
	}
	if err := ack("start"); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdin, "C0644 %d %s\n", len(data), path.Base(strings.TrimPrefix(target, d.fs))); err != nil {
		return fail("send", err)
	}
	if err := ack("file record"); err != nil {
		return err
	}
	if _, err := stdin.Write(append(append([]byte(nil), data...), 0)); err != nil {
		return fail("send", err)
	}
	if err := ack("data"); err != nil {
		return err
	}
	_ = stdin.Close()
	if err := sess.Wait(); err != nil {
		var exit *ssh.ExitError
		if !errors.As(err, &exit) {
			return fail("close", err)
		}
		return s.errf(ErrCommand, what, fmt.Errorf("scp exited with status %d", exit.ExitStatus()))
	}
	return nil
}

// md5Hex returns the MD5 digest NX-OS's "show file ... md5sum" prints.
func md5Hex(data []byte) string {
	h := md5.Sum(data) //nolint:gosec // see import
	return hex.EncodeToString(h[:])
}
