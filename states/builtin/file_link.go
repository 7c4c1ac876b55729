package builtin

// This file holds Salt's file.hardlink and file.decode state functions
// (salt/states/file.py).

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyhash"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func fileLinkStates() []states.Function {
	return []states.Function{
		{Name: "file.hardlink", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("target"), sbOpt("force", false), sbOpt("makedirs", false),
			sbOpt("user", nil), sbOpt("group", nil), sbOpt("dir_mode", nil)}, Kwargs: true}, Fn: fileHardlinkState},
		{Name: "file.decode", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("encoded_data", nil), sbOpt("contents_pillar", nil),
			sbOpt("encoding_type", "base64"), sbOpt("checksum", "md5")}}, Fn: fileDecodeState},
	}
}

// fileInode is the path's inode (not following a symlink), or false.
func fileInode(p string) (uint64, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// fileIsHardlink is file.is_hardlink: more than one link to the inode.
func fileIsHardlink(p string) bool {
	var st syscall.Stat_t
	return syscall.Lstat(p, &st) == nil && st.Nlink > 1
}

func fileSameInode(a, b string) bool {
	ia, ok1 := fileInode(a)
	ib, ok2 := fileInode(b)
	return ok1 && ok2 && ia == ib
}

// fileHardlinkCheck is states.file._hardlink_check.
func fileHardlinkCheck(name, target string, force bool) (states.Result, string, *payload.Map) {
	changes := &payload.Map{}
	switch {
	case !fileExists(target):
		return states.False, fmt.Sprintf("Target %s for hard link does not exist", target), changes
	case fileIsDir(target):
		return states.False, fmt.Sprintf("Unable to hard link from directory %s", target), changes
	case fileIsDir(name):
		return states.False, fmt.Sprintf("Unable to hard link to directory %s", name), changes
	case !fileExists(name):
		changes.Set("new", name)
		return states.None, fmt.Sprintf("Hard link %s to %s is set for creation", name, target), changes
	case fileIsHardlink(name):
		if fileSameInode(name, target) {
			return states.True, fmt.Sprintf("The hard link %s is presently targetting %s", name, target), changes
		}
		changes.Set("change", name)
		return states.None, fmt.Sprintf("Link %s target is set to be changed to %s", name, target), changes
	case force:
		return states.None, fmt.Sprintf("The file or directory %s is set for removal to make way for a new hard link targeting %s", name, target), changes
	}
	return states.False, fmt.Sprintf("File or directory exists where the hard link %s should be. Did you mean to use force?", name), changes
}

// fileLinkErr is file.link's error text for a failed os.link.
func fileLinkErr(path string, err error) string {
	return fmt.Sprintf("Could not create '%s': %s", path, filePyOSError(err))
}

// fileHardlinkState is file.hardlink.
func fileHardlinkState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	target := a.Str("target")
	force := a.Bool("force")
	ret := fileNewRet(name)
	dirMode, _ := fileNormalizeMode(a.Get("dir_mode"))
	userArg := fileTestOwner(a.CleanKwargs(), a.Get("user"))
	groupArg := a.Get("group")
	if name == "" {
		return fileError(ret, "Must provide name to file.hardlink")
	}
	if userArg == nil {
		userArg = r.optStr("user", "")
		if userArg == "" {
			userArg = fileUIDToUser(os.Geteuid())
		}
	}
	if groupArg == nil {
		groupArg = filePrimaryGroup(userArg)
	}
	var pre []string
	if _, ok := fileUserToUID(userArg); !ok {
		pre = append(pre, fmt.Sprintf("User %s does not exist", pyfmt.Str(userArg)))
	}
	if _, ok := fileGroupToGID(groupArg); !ok {
		pre = append(pre, fmt.Sprintf("Group %s does not exist", pyfmt.Str(groupArg)))
	}
	if !filepath.IsAbs(name) {
		pre = append(pre, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if !filepath.IsAbs(target) {
		pre = append(pre, fmt.Sprintf("Specified target %s is not an absolute path", target))
	}
	if len(pre) > 0 {
		msg := strings.Join(pre, ". ")
		if len(pre) > 1 {
			msg += "."
		}
		return fileError(ret, msg)
	}
	if r.test {
		ret.Result, ret.Comment, ret.Changes = fileHardlinkCheck(name, target, force)
		return *ret, nil
	}
	for _, d := range [][2]string{{"to", name}, {"from", target}} {
		if fileIsDir(d[1]) {
			return fileError(ret, fmt.Sprintf("Unable to hard link %s directory %s", d[0], d[1]))
		}
	}
	if !fileExists(target) {
		return fileError(ret, fmt.Sprintf("Target %s for hard link does not exist", target))
	}
	if parent := filePyDirname(name); !fileIsDir(parent) {
		if !a.Bool("makedirs") {
			return fileError(ret, fmt.Sprintf("Directory %s for hard link is not present", parent))
		}
		if err := r.makedirs(name, userArg, groupArg, dirMode); err != nil {
			return states.Ret{}, err
		}
	}
	if fileIsFile(name) && !fileIsHardlink(name) {
		if !force {
			return fileError(ret, fmt.Sprintf("File exists where the hard link %s should be", name))
		}
		if err := os.Remove(name); err != nil {
			return states.Ret{}, fmt.Errorf("file.hardlink: %w", err)
		}
		ret.Changes.Set("forced", "File for hard link was forcibly replaced")
	}
	switch {
	case fileIsHardlink(name):
		if fileSameInode(name, target) {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("Target of hard link %s is already pointing to %s", name, target)
			return *ret, nil
		}
		if err := os.Remove(name); err != nil {
			return states.Ret{}, fmt.Errorf("file.hardlink: %w", err)
		}
		if err := os.Link(target, name); err != nil {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Unable to set target of hard link %s -> %s: %s", name, target, fileLinkErr(name, err))
			return *ret, nil
		}
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Set target of hard link %s -> %s", name, target)
		ret.Changes.Set("new", name)
	case !fileExists(name):
		if err := os.Link(target, name); err != nil {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Unable to create new hard link %s -> %s: %s", name, target, fileLinkErr(name, err))
			return *ret, nil
		}
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Created new hard link %s -> %s", name, target)
		ret.Changes.Set("new", name)
	}
	return *ret, nil
}

// fileDigest is hashutil.digest / digest_file for Salt's checksum names.
func fileDigest(data []byte, checksum string) (string, error) {
	h, ok := pyhash.NewCommon(checksum)
	if !ok {
		return "", fmt.Errorf("%w: Hash func '%s' is not supported.", modules.ErrInvocation, checksum)
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// filePyB64Decode is base64.decodebytes: characters outside the alphabet
// are skipped, padding ends the data.
func filePyB64Decode(s string) ([]byte, error) {
	var clean bytes.Buffer
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '+' || ch == '/' || ch == '=' {
			clean.WriteByte(ch)
		}
	}
	text := clean.String()
	if i := strings.IndexByte(text, '='); i >= 0 {
		text = text[:i]
	}
	out, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: binascii.Error: Incorrect padding", modules.ErrExecution)
	}
	return out, nil
}

// fileDecodeState is file.decode: base64 data (given or from pillar)
// written to name when its checksum differs.
func fileDecodeState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	encoded, pillarKey := a.Get("encoded_data"), a.Get("contents_pillar")
	var content any
	switch {
	case !payload.Truthy(encoded) && !payload.Truthy(pillarKey):
		return ret, fmt.Errorf("%w: Specify either the 'encoded_data' or 'contents_pillar' argument.", modules.ErrExecution)
	case payload.Truthy(encoded) && payload.Truthy(pillarKey):
		return ret, fmt.Errorf("%w: Specify only one 'encoded_data' or 'contents_pillar' argument.", modules.ErrExecution)
	case payload.Truthy(encoded):
		content = encoded
	default:
		v, err := sbExec(ctx, c, "pillar.get", []any{pillarKey, false}, nil)
		if err != nil {
			return ret, err
		}
		if v == false {
			return ret, fmt.Errorf("%w: Pillar data not found.", modules.ErrExecution)
		}
		content = v
	}
	checksum := a.Str("checksum")
	data, err := filePyB64Decode(pyfmt.Str(content))
	if err != nil {
		return ret, err
	}
	insum, err := fileDigest(data, checksum)
	if err != nil {
		return ret, err
	}
	if fileIsFile(name) {
		cur, err := os.ReadFile(name)
		if err != nil {
			return ret, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		outsum, _ := fileDigest(cur, checksum)
		if insum == outsum {
			ret.Comment = "File is in the correct state."
			ret.Result = states.True
			return ret, nil
		}
		ret.Changes = payload.NewMap("old", outsum, "new", insum)
	}
	if c.Test {
		ret.Comment = "File is set to be updated."
		ret.Result = states.None
		return ret, nil
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return ret, fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	ret.Result = states.True
	ret.Comment = "File was updated."
	if ret.Changes.Len() == 0 {
		ret.Changes = payload.NewMap("old", nil, "new", insum)
	}
	return ret, nil
}
