package builtin

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's file.copy and file.rename states (salt/states/file.py
// copy_ and rename): files already on the minion copied or moved into place.

func fileCopyStates() []states.Function {
	p := func(name string, def any) modules.Param { return modules.Param{Name: name, Default: def} }
	name := modules.Param{Name: "name", Required: true}
	source := modules.Param{Name: "source", Required: true}
	return []states.Function{
		{Name: "file.copy", Fn: fileCopyState, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{name, source,
			p("force", false), p("makedirs", false), p("preserve", false), p("user", nil), p("group", nil),
			p("mode", nil), p("dir_mode", nil), p("subdir", false)}}},
		{Name: "file.rename", Fn: fileRenameState, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{name, source,
			p("force", false), p("makedirs", false)}}},
	}
}

// fileCopyState is file.copy.
func fileCopyState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := fileExpandUser(c.Args.Str("name"))
	source := fileExpandUser(c.Args.Str("source"))
	ret := fileNewRet(name)
	ret.Comment = fmt.Sprintf("Copied \"%s\" to \"%s\"", source, name)
	if name == "" {
		return fileError(ret, "Must provide name to file.copy")
	}
	if !filepath.IsAbs(name) {
		return fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if !fileExists(source) {
		return fileError(ret, fmt.Sprintf("Source file \"%s\" is not present", source))
	}
	r := fileNewRun(ctx, c)
	preserve := c.Args.Bool("preserve")
	userArg, groupArg := c.Args.Get("user"), c.Args.Get("group")
	mode := ""
	if m, ok := fileNormalizeMode(c.Args.Get("mode")); ok {
		mode = m
	}
	if preserve {
		st, err := fileStatPath(source, true)
		if err != nil {
			return states.Ret{}, err
		}
		userArg, groupArg, mode = st.user, st.group, st.mode
	} else {
		kw, _ := c.Args.Get("kwargs").(*payload.Map)
		userArg = fileTestOwner(kw, userArg)
		if userArg == nil {
			userArg = r.optStr("user", "")
			if userArg == "" {
				userArg = fileUIDToUser(os.Geteuid())
			}
		}
		if groupArg == nil {
			groupArg = filePrimaryGroup(userArg)
		}
		if msg := r.checkUser(userArg, groupArg); msg != "" {
			return fileError(ret, msg)
		}
		if mode == "" {
			st, err := fileStatPath(source, true)
			if err != nil {
				return states.Ret{}, err
			}
			mode = st.mode
		}
	}
	if fileIsDir(name) && c.Args.Bool("subdir") {
		name = filePyJoin(name, filePyBasename(source))
	}
	changed := true
	force := c.Args.Bool("force")
	if fileLexists(source) && fileLexists(name) {
		if force && fileIsFile(name) {
			h1, err1 := fileHashFile(name, "sha256")
			h2, err2 := fileHashFile(source, "sha256")
			if err1 == nil && err2 == nil && h1 == h2 {
				ret.Comment += " - files are identical but force flag is set"
			}
		}
		if !force {
			changed = false
		} else if !c.Test {
			if err := fileRemovePath(name); err != nil {
				return fileError(ret, fmt.Sprintf("Failed to delete \"%s\" in preparation for forced move", name))
			}
		}
	}
	if c.Test {
		if changed {
			ret.Comment = fmt.Sprintf("File \"%s\" is set to be copied to \"%s\"", source, name)
			ret.Result = states.None
		} else {
			ret.Comment = fmt.Sprintf("The target file \"%s\" exists and will not be overwritten", name)
			ret.Result = states.True
		}
		return *ret, nil
	}
	if !changed {
		ret.Comment = fmt.Sprintf("The target file \"%s\" exists and will not be overwritten", name)
		ret.Result = states.True
		return *ret, nil
	}
	if dname := filePyDirname(name); !fileIsDir(dname) {
		if !c.Args.Bool("makedirs") {
			return fileError(ret, fmt.Sprintf("The target directory %s is not present", dname))
		}
		dirMode := ""
		if m, ok := fileNormalizeMode(c.Args.Get("dir_mode")); ok {
			dirMode = m
		} else if mode != "" {
			dirMode = fileExecDirMode(mode)
		}
		if err := r.makedirs(name, userArg, groupArg, dirMode); err != nil {
			return states.Ret{}, err
		}
	}
	var err error
	if fileIsDir(source) {
		err = fileCopyTree(source, name)
		if err == nil {
			err = filepath.WalkDir(name, func(p string, d fs.DirEntry, werr error) error {
				if werr != nil || p == name {
					return werr
				}
				_, cerr := fileChownPath(p, userArg, groupArg, true)
				return cerr
			})
		}
	} else {
		err = fileShutilCopy(source, name)
	}
	if err != nil {
		return fileError(ret, fmt.Sprintf("Failed to copy \"%s\" to \"%s\"", source, name))
	}
	ret.Changes = payload.NewMap(name, source)
	if !preserve {
		check := *ret
		check.Changes = ret.Changes
		if _, err := r.checkPerms(&check, name, userArg, groupArg, mode, false); err != nil {
			return states.Ret{}, err
		}
		if check.Result == states.False {
			ret.Result, ret.Comment = check.Result, check.Comment
		}
	}
	return *ret, nil
}

// fileExecDirMode adds the execute bit to each nonzero digit of the last
// three of mode, as file.copy does for the directories it creates.
func fileExecDirMode(mode string) string {
	digits := []byte(mode)
	if len(digits) > 3 {
		digits = digits[len(digits)-3:]
	}
	for i, d := range digits {
		if d != '0' {
			n, _ := strconv.Atoi(string(d))
			digits[i] = byte('0' + (n | 1))
		}
	}
	return string(digits)
}

// fileShutilCopy is shutil.copy: the contents and permission bits of src
// go to dst (a directory dst receives src's basename).
func fileShutilCopy(src, dst string) error {
	if fileIsDir(dst) {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, fi.Mode().Perm()|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// fileCopyTree is shutil.copytree(src, dst, symlinks=True): dst must not
// exist; symlinks are copied as links.
func fileCopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.Mkdir(target, fi.Mode().Perm())
		default:
			return fileShutilCopy(p, target)
		}
	})
}

// fileRenameState is file.rename.
func fileRenameState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := os.ExpandEnv(fileExpandUser(c.Args.Str("name")))
	source := os.ExpandEnv(fileExpandUser(c.Args.Str("source")))
	ret := fileNewRet(name)
	if name == "" {
		return fileError(ret, "Must provide name to file.rename")
	}
	if !filepath.IsAbs(name) {
		return fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if !fileLexists(source) {
		ret.Comment = fmt.Sprintf("Source file \"%s\" has already been moved out of place", source)
		return *ret, nil
	}
	if fileLexists(name) {
		if !c.Args.Bool("force") {
			ret.Comment = fmt.Sprintf("The target file \"%s\" exists and will not be overwritten", name)
			return *ret, nil
		}
		if !c.Test {
			if err := fileRemovePath(name); err != nil {
				return fileError(ret, fmt.Sprintf("Failed to delete \"%s\" in preparation for forced move", name))
			}
		}
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("File \"%s\" is set to be moved to \"%s\"", source, name)
		ret.Result = states.None
		return *ret, nil
	}
	if dname := filePyDirname(name); !fileIsDir(dname) {
		if !c.Args.Bool("makedirs") {
			return fileError(ret, fmt.Sprintf("The target directory %s is not present", dname))
		}
		if err := fileNewRun(ctx, c).makedirs(name, nil, nil, ""); err != nil {
			return states.Ret{}, err
		}
	}
	var err error
	if fileIsLink(source) {
		var link string
		if link, err = os.Readlink(source); err == nil {
			if err = os.Symlink(link, name); err == nil {
				err = os.Remove(source)
			}
		}
	} else {
		err = fileMove(source, name)
	}
	if err != nil {
		return fileError(ret, fmt.Sprintf("Failed to move \"%s\" to \"%s\"", source, name))
	}
	ret.Comment = fmt.Sprintf("Moved \"%s\" to \"%s\"", source, name)
	ret.Changes = payload.NewMap(name, source)
	return *ret, nil
}

// fileMove is shutil.move: a rename, or a copy and delete across file
// systems.
func fileMove(src, dst string) error {
	if fileIsDir(dst) {
		dst = filepath.Join(dst, filepath.Base(strings.TrimRight(src, "/")))
	}
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	if fileIsDir(src) {
		if err := fileCopyTree(src, dst); err != nil {
			return err
		}
		return os.RemoveAll(src)
	}
	if err := fileShutilCopy(src, dst); err != nil {
		return err
	}
	return os.Remove(src)
}
