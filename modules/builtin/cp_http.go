package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/modules"
)

// cpMaxFilename is salt.fileclient's MAX_FILENAME_LENGTH.
const cpMaxFilename = 255

// extrnPath is Client._extrn_path: where an http(s) URL is cached,
// cachedir/extrn_files/<saltenv>/<host[:port]>/<path[-query]>.
func (f *SaltFileClient) extrnPath(pu *url.URL, saltenv string) (string, error) {
	// As on POSIX in Salt: the netloc without user:password, port kept.
	netloc := pu.Host
	name := pu.EscapedPath()
	if pu.RawQuery != "" {
		name = name + "-" + pu.RawQuery
	}
	root := filepath.Join(f.cacheDir, "extrn_files", saltenv, netloc)
	if len(name) > cpMaxFilename {
		sum := sha256.Sum256([]byte(name))
		name = hex.EncodeToString(sum[:])
	}
	p := filepath.Join(root, name)
	if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: Invalid path", modules.ErrExecution)
	}
	return p, nil
}

// getHTTP is get_url for http and https: the body is saved to dest (or
// the extrn_files cache) through a .part file; a failed request raises
// Salt's MinionError text "Error: <error> reading <path>".
func (f *SaltFileClient) getHTTP(ctx context.Context, pu *url.URL, dest string, toFile, makedirs bool, saltenv string) (any, error) {
	if toFile {
		if dest != "" {
			if st, err := os.Stat(filepath.Dir(dest)); err != nil || !st.IsDir() {
				if !makedirs {
					return "", nil
				}
				if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
			}
		} else {
			p, err := f.extrnPath(pu, saltenv)
			if err != nil {
				return nil, err
			}
			dest = p
			if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
	}
	fail := func(msg string) error {
		return fmt.Errorf("%w: Error: %s reading %s", modules.ErrExecution, msg, pu.EscapedPath())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pu.String(), nil)
	if err != nil {
		return nil, fail(err.Error())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fail(pyNetError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		// tornado's HTTPError: "HTTP <code>: <reason>"
		return nil, fail(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, http.StatusText(resp.StatusCode)))
	}
	if !toFile {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fail(pyNetError(err))
		}
		return b, nil
	}
	part := dest + ".part"
	out, err := os.Create(part)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		os.Remove(part)
		return nil, fail(pyNetError(err))
	}
	if err := out.Close(); err != nil {
		os.Remove(part)
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if err := os.Rename(part, dest); err != nil {
		return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return dest, nil
}

// pyNetError is str() of the Python exception a failed connection raises
// in Salt's HTTP client: socket.gaierror for names that do not resolve,
// OSError for refused or unreachable connections.
func pyNetError(err error) string {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsNotFound {
			return "[Errno -2] Name or service not known"
		}
		return "[Errno -3] Temporary failure in name resolution"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ECONNREFUSED:
			return "[Errno 111] Connection refused"
		case syscall.ENETUNREACH:
			return "[Errno 101] Network is unreachable"
		case syscall.EHOSTUNREACH:
			return "[Errno 113] No route to host"
		case syscall.ECONNRESET:
			return "[Errno 104] Connection reset by peer"
		}
	}
	return err.Error()
}
