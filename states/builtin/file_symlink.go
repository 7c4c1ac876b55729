package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileLinkOwner returns the user and group owning a symlink itself.
func fileLinkOwner(p string) (any, any) {
	st, err := fileStatPath(p, false)
	if err != nil {
		return "", ""
	}
	return st.user, st.group
}

// fileLinkOwnedBy is states.file._check_symlink_ownership.
func fileLinkOwnedBy(p string, userArg, groupArg any) bool {
	u, g := fileLinkOwner(p)
	return pyfmt.Str(u) == pyfmt.Str(userArg) && pyfmt.Str(g) == pyfmt.Str(groupArg)
}

// fileSetLinkOwner is states.file._set_symlink_ownership.
func fileSetLinkOwner(p string, userArg, groupArg any) bool {
	_, _ = fileChownPath(p, userArg, groupArg, true)
	return fileLinkOwnedBy(p, userArg, groupArg)
}

// fileSymlinkCheck is states.file._symlink_check (test-mode prediction).
func fileSymlinkCheck(name, target string, force bool, userArg, groupArg any) (states.Result, string, *payload.Map) {
	changes := &payload.Map{}
	if !fileExists(name) && !fileIsLink(name) {
		changes.Set("new", name)
		return states.None, fmt.Sprintf("Symlink %s to %s is set for creation", name, target), changes
	}
	if fileIsLink(name) {
		cur, _ := os.Readlink(name)
		if cur != target {
			changes.Set("change", name)
			return states.None, fmt.Sprintf("Link %s target is set to be changed to %s", name, target), changes
		}
		msg := fmt.Sprintf("The symlink %s is present", name)
		if !fileLinkOwnedBy(name, userArg, groupArg) {
			u, g := fileLinkOwner(name)
			changes.Set("ownership", fmt.Sprintf("%s:%s", pyfmt.Str(u), pyfmt.Str(g)))
			msg += fmt.Sprintf(", but the ownership of the symlink would be changed from %s:%s to %s:%s", pyfmt.Str(u), pyfmt.Str(g), pyfmt.Str(userArg), pyfmt.Str(groupArg))
			return states.None, msg, changes
		}
		return states.True, msg, changes
	}
	if force {
		return states.None, fmt.Sprintf("The file or directory %s is set for removal to make way for a new symlink targeting %s", name, target), changes
	}
	return states.False, fmt.Sprintf("File or directory exists where the symlink %s should be. Did you mean to use force?", name), changes
}

// fileSymlinkState is file.symlink.
func fileSymlinkState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	target := a.Str("target")
	force, atomic := a.Bool("force"), a.Bool("atomic")
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.symlink")
	}
	mode, _ := fileNormalizeMode(a.Get("mode"))
	userArg := fileTestOwner(a.CleanKwargs(), a.Get("user"))
	groupArg := a.Get("group")
	if a.Bool("inherit_user_and_group") && (userArg == nil || groupArg == nil) && fileIsLink(name) {
		u, g := fileLinkOwner(name)
		if userArg == nil {
			userArg = u
		}
		if groupArg == nil {
			groupArg = g
		}
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
	if len(pre) > 0 {
		msg := strings.Join(pre, ". ")
		if len(pre) > 1 {
			msg += "."
		}
		return fileError(ret, msg)
	}
	tresult, tcomment, tchanges := fileSymlinkCheck(name, target, force, userArg, groupArg)
	parent := filePyDirname(name)
	if !fileIsDir(parent) {
		if a.Bool("makedirs") {
			if r.test {
				tcomment += fmt.Sprintf("\n%s will be created", parent)
			} else if err := r.makedirs(name, userArg, groupArg, mode); err != nil {
				return states.Ret{}, err
			}
		} else {
			if !r.test {
				return fileError(ret, fmt.Sprintf("Directory %s for symlink is not present", parent))
			}
			tcomment += fmt.Sprintf("\nDirectory %s for symlink is not present", parent)
		}
	}
	if r.test {
		ret.Result, ret.Comment, ret.Changes = tresult, tcomment, tchanges
		return *ret, nil
	}
	if fileIsLink(name) {
		cur, _ := os.Readlink(name)
		if filepath.Clean(cur) == filepath.Clean(target) {
			if fileLinkOwnedBy(name, userArg, groupArg) {
				ret.Comment = fmt.Sprintf("Symlink %s is present and owned by %s:%s", name, pyfmt.Str(userArg), pyfmt.Str(groupArg))
			} else if fileSetLinkOwner(name, userArg, groupArg) {
				ret.Comment = fmt.Sprintf("Set ownership of symlink %s to %s:%s", name, pyfmt.Str(userArg), pyfmt.Str(groupArg))
				ret.Changes.Set("ownership", fmt.Sprintf("%s:%s", pyfmt.Str(userArg), pyfmt.Str(groupArg)))
			} else {
				ret.Result = states.False
				ret.Comment += fmt.Sprintf("Failed to set ownership of symlink %s to %s:%s", name, pyfmt.Str(userArg), pyfmt.Str(groupArg))
			}
			return *ret, nil
		}
	} else if fileExists(name) {
		if bv := a.Get("backupname"); bv != nil {
			bk := pyfmt.Str(bv)
			if !filepath.IsAbs(bk) {
				if bk != filePyBasename(bk) {
					return fileError(ret, fmt.Sprintf("Backupname must be an absolute path or a file name: %s", bk))
				}
				bk = filePyJoin(filepath.Dir(filepath.Clean(name)), bk)
			}
			if fileLexists(bk) {
				if !force {
					return fileError(ret, fmt.Sprintf("Symlink & backup dest exists and Force not set. %s -> %s - backup: %s", name, target, bk))
				}
				_ = fileRemovePath(bk)
			}
			if err := os.Rename(name, bk); err != nil {
				ret.Changes = &payload.Map{}
				return fileError(ret, fmt.Sprintf("Unable to rename %s to backup %s -> : %s", name, bk, filePyOSError(err)))
			}
		} else if !force && !atomic {
			kind := "File system entry"
			if fileIsFile(name) {
				kind = "File"
			} else if fileIsDir(name) {
				kind = "Directory"
			}
			return fileError(ret, fmt.Sprintf("%s exists where the symlink %s should be", kind, name))
		}
	}
	if err := fileMakeSymlink(target, name, force, atomic); err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Unable to create new symlink %s -> %s: %s", name, target, err)
		return *ret, nil
	}
	ret.Comment = fmt.Sprintf("Created new symlink %s -> %s", name, target)
	ret.Changes.Set("new", name)
	if !fileLinkOwnedBy(name, userArg, groupArg) && !fileSetLinkOwner(name, userArg, groupArg) {
		ret.Result = states.False
		ret.Comment += fmt.Sprintf(", but was unable to set ownership to %s:%s", pyfmt.Str(userArg), pyfmt.Str(groupArg))
	}
	return *ret, nil
}

// fileMakeSymlink is file.symlink (the execution function).
func fileMakeSymlink(src, p string, force, atomic bool) error {
	if fileIsLink(p) {
		if cur, err := os.Readlink(p); err == nil && filepath.Clean(cur) == filepath.Clean(src) {
			return nil
		}
		if !force && !atomic {
			return fmt.Errorf("Found existing symlink: %s", p)
		}
	}
	if fileExists(p) && !force && !atomic {
		return fmt.Errorf("Existing path is not a symlink: %s", p)
	}
	if (fileIsLink(p) || fileExists(p)) && force && !atomic {
		if err := syscall.Unlink(p); err != nil {
			return fmt.Errorf("%s", filePyOSError(&fs.PathError{Op: "unlink", Path: p, Err: err}))
		}
	} else if atomic {
		tmp := filepath.Join(filepath.Dir(p), fmt.Sprintf(".%s.tmp%d", filepath.Base(p), os.Getpid()))
		_ = os.Remove(tmp)
		if err := os.Symlink(src, tmp); err != nil {
			return fmt.Errorf("Could not create '%s'", p)
		}
		if err := os.Rename(tmp, p); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("Could not create '%s'", p)
		}
		return nil
	}
	if err := os.Symlink(src, p); err != nil {
		return fmt.Errorf("Could not create '%s'", p)
	}
	return nil
}
