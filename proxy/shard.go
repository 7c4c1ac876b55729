package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/internal/atomicfile"
)

// This file splits one shared device list between the processes of a
// proxy fleet (gsalt-proxy --shard I/N, or a Kubernetes StatefulSet pod
// name-I with GSALT_SHARDS=N). Every process reads the same list and keeps
// the devices that rendezvous (highest random weight) hashing gives its
// shard, so no coordination is needed, each device is served by exactly one
// shard, and changing N from n to n+1 moves only the devices the new shard
// takes (about 1/(n+1) of them); the others stay where they were.

// Environment variables read by ShardFromEnv.
const (
	// EnvShards is the number of shards (a StatefulSet's replicas).
	EnvShards = "GSALT_SHARDS"
	// EnvShard optionally gives the shard index; without it the index is
	// the trailing -I of EnvHostname.
	EnvShard = "GSALT_SHARD"
	// EnvHostname is the pod name of a StatefulSet member, name-I.
	EnvHostname = "HOSTNAME"
	// MaxShards bounds N.
	MaxShards = 4096
)

// Sentinel errors of the device list and of sharding.
var (
	// ErrBadShard: a shard is not I/N with 0 <= I < N <= MaxShards.
	ErrBadShard = errors.New("proxy: invalid shard")
	// ErrBadDeviceList: a device list file or directory cannot be used.
	ErrBadDeviceList = errors.New("proxy: invalid device list")
)

// Shard is one process's part of a device list: Index in [0, Count).
// The zero value (Count 0) means no sharding: every device is kept.
type Shard struct {
	Index, Count int
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Enabled reports whether s splits the device list.
func (s Shard) Enabled() bool { return s.Count > 0 }

func (s Shard) check() error {
	if s.Count < 1 || s.Count > MaxShards || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%w: %d/%d (want I/N with 0 <= I < N <= %d)", ErrBadShard, s.Index, s.Count, MaxShards)
	}
	return nil
}

// ParseShard parses "I/N" (shard I of N, I counted from 0).
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%w: %q (want I/N, e.g. 0/3)", ErrBadShard, v)
	}
	si, err1 := strconv.Atoi(i)
	sn, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%w: %q (want I/N, e.g. 0/3)", ErrBadShard, v)
	}
	s := Shard{Index: si, Count: sn}
	return s, s.check()
}

// ShardFromEnv returns the shard given by the environment (getenv, e.g.
// os.Getenv): GSALT_SHARDS=N and the index from GSALT_SHARD or else from
// the trailing "-I" of HOSTNAME (a StatefulSet pod name such as
// gsalt-proxy-2). Without GSALT_SHARDS it returns the zero Shard.
func ShardFromEnv(getenv func(string) string) (Shard, error) {
	nv := strings.TrimSpace(getenv(EnvShards))
	if nv == "" {
		return Shard{}, nil
	}
	n, err := strconv.Atoi(nv)
	if err != nil {
		return Shard{}, fmt.Errorf("%w: %s=%q is not a number", ErrBadShard, EnvShards, nv)
	}
	var idx int
	if iv := strings.TrimSpace(getenv(EnvShard)); iv != "" {
		if idx, err = strconv.Atoi(iv); err != nil {
			return Shard{}, fmt.Errorf("%w: %s=%q is not a number", ErrBadShard, EnvShard, iv)
		}
	} else {
		host := getenv(EnvHostname)
		if idx, err = OrdinalFromHostname(host); err != nil {
			return Shard{}, err
		}
	}
	s := Shard{Index: idx, Count: n}
	return s, s.check()
}

// OrdinalFromHostname returns I of a StatefulSet pod name "name-I"; a
// fully qualified name is cut at its first dot.
func OrdinalFromHostname(host string) (int, error) {
	host, _, _ = strings.Cut(strings.TrimSpace(host), ".")
	dash := strings.LastIndexByte(host, '-')
	if dash < 0 || dash == len(host)-1 {
		return 0, fmt.Errorf("%w: %s=%q does not end in -<ordinal> (set %s)", ErrBadShard, EnvHostname, host, EnvShard)
	}
	i, err := strconv.Atoi(host[dash+1:])
	if err != nil || i < 0 {
		return 0, fmt.Errorf("%w: %s=%q does not end in -<ordinal> (set %s)", ErrBadShard, EnvHostname, host, EnvShard)
	}
	return i, nil
}

// weight is the rendezvous weight of id on shard s: FNV-1a 64 of the id
// and the shard number, finished with the splitmix64 mixer so that close
// inputs spread over the whole range. It is stable across versions: the
// shard of a device must not change when gsalt is upgraded.
func weight(id string, s int) uint64 {
	h := fnv.New64a()
	io.WriteString(h, id)
	var b [9]byte
	b[0] = 0
	binary.BigEndian.PutUint64(b[1:], uint64(s))
	h.Write(b[:])
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// ShardOf returns the shard in [0, n) that serves id: the one with the
// highest weight (ties, astronomically rare, go to the lower shard).
func ShardOf(id string, n int) int {
	best, bestW := 0, uint64(0)
	for s := 0; s < n; s++ {
		if w := weight(id, s); s == 0 || w > bestW {
			best, bestW = s, w
		}
	}
	return best
}

// Owns reports whether shard s serves id; the zero Shard serves every id.
func (s Shard) Owns(id string) bool {
	if s.Count <= 1 {
		return true
	}
	return ShardOf(id, s.Count) == s.Index
}

// Select returns the ids of ids that s serves, in their order.
func (s Shard) Select(ids []string) []string {
	if s.Count <= 1 {
		return ids
	}
	out := make([]string, 0, len(ids)/s.Count+1)
	for _, id := range ids {
		if s.Owns(id) {
			out = append(out, id)
		}
	}
	return out
}

// ReadDeviceList reads a shared device list: a YAML list of ids (a file
// whose first significant line starts with "-" or "["), or else one id a
// line with # comments (ReadIDs). Duplicates are refused.
func ReadDeviceList(data []byte) ([]string, error) {
	if len(data) > maxIDsFile {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBadDeviceList, maxIDsFile)
	}
	var ids []string
	if isYAMLList(data) {
		var list []any
		if err := yaml.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadDeviceList, err)
		}
		for i, v := range list {
			var id string
			switch v := v.(type) {
			case string:
				id = v
			case int:
				id = strconv.Itoa(v)
			default:
				return nil, fmt.Errorf("%w: item %d is a %T, not an id", ErrBadDeviceList, i, v)
			}
			if err := CheckID(id); err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	} else {
		var err error
		if ids, err = ReadIDs(bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return nil, fmt.Errorf("%w: %q listed twice", ErrBadDeviceList, id)
		}
		seen[id] = true
	}
	if len(ids) > MaxDevices {
		return nil, fmt.Errorf("%w: %d ids, more than %d", ErrBadDeviceList, len(ids), MaxDevices)
	}
	return ids, nil
}

func isYAMLList(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || line == "---" {
			continue
		}
		return strings.HasPrefix(line, "- ") || line == "-" || strings.HasPrefix(line, "[")
	}
	return false
}

// LoadDeviceList reads the shared device list at path. A file is read
// with ReadDeviceList. A directory lists one device per entry (a file or a
// subdirectory named after the id, e.g. a ConfigMap with one key per
// device, or proxy.d-like per-device directories); entries whose names
// start with "." (Kubernetes' ..data links) are skipped. The ids are
// sorted by name for a directory.
func LoadDeviceList(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("proxy: device list: %w", err)
	}
	if !fi.IsDir() {
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("proxy: device list: %w", err)
		}
		defer fh.Close()
		data, err := io.ReadAll(io.LimitReader(fh, maxIDsFile+1))
		if err != nil {
			return nil, fmt.Errorf("proxy: device list: %w", err)
		}
		return ReadDeviceList(data)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("proxy: device list: %w", err)
	}
	var ids []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if err := CheckID(name); err != nil {
			return nil, err
		}
		ids = append(ids, name)
	}
	if len(ids) > MaxDevices {
		return nil, fmt.Errorf("%w: %d ids, more than %d", ErrBadDeviceList, len(ids), MaxDevices)
	}
	sort.Strings(ids)
	return ids, nil
}

// SeedKeys copies pre-generated key pairs into the fleet's pki directory:
// for each id without pkiDir/<id>/minion.pem, seedDir/<id>.pem and
// seedDir/<id>.pub (as written by gsalt-key --gen-keys=<id>
// --gen-keys-dir=seedDir) become pkiDir/<id>/minion.pem and minion.pub.
// An id without a seeded pair is left alone (its minion generates one). A
// device keeps the same key whichever shard serves it, so a key accepted
// once on the master stays accepted when devices move between shards. It
// returns how many pairs were copied.
func SeedKeys(seedDir, pkiDir string, ids []string) (int, error) {
	n := 0
	for _, id := range ids {
		if err := CheckID(id); err != nil {
			return n, err
		}
		dst := filepath.Join(pkiDir, id)
		if _, err := os.Stat(filepath.Join(dst, "minion.pem")); err == nil {
			continue
		}
		pem, err := os.ReadFile(filepath.Join(seedDir, id+".pem"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("proxy: seed key: %w", err)
		}
		pub, err := os.ReadFile(filepath.Join(seedDir, id+".pub"))
		if err != nil {
			return n, fmt.Errorf("proxy: seed key: %w", err)
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return n, fmt.Errorf("proxy: seed key: %w", err)
		}
		// The public key first: a minion.pem alone would be taken as a
		// complete pair by the next start.
		if err := atomicfile.WriteFile(filepath.Join(dst, "minion.pub"), pub, 0o644, false); err != nil {
			return n, fmt.Errorf("proxy: seed key: %w", err)
		}
		if err := atomicfile.WriteFile(filepath.Join(dst, "minion.pem"), pem, 0o400, false); err != nil {
			return n, fmt.Errorf("proxy: seed key: %w", err)
		}
		n++
	}
	return n, nil
}
