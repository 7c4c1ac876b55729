package builtin

// This file is file.cached and file.not_cached of Salt's file state module
// (salt/states/file.py), which archive.extracted uses to fetch and drop
// its source: salt:// and local sources (gsalt's file client has no
// http/ftp/s3 fetching).

import (
	"context"
	"fmt"
	"os"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func fileCachedStates() []states.Function {
	return []states.Function{
		{Name: "file.cached", Fn: fileCachedState, Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("source_hash", ""),
			sbOpt("source_hash_name", nil), sbOpt("skip_verify", false), sbOpt("saltenv", "base"), sbOpt("use_etag", false)}}},
		{Name: "file.not_cached", Fn: fileNotCachedState, Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("saltenv", "base")}}},
	}
}

// fileRemoteProtos is salt.utils.files.REMOTE_PROTOS.
var fileRemoteProtos = map[string]bool{"http": true, "https": true, "ftp": true, "swift": true, "s3": true}

// fileURLPath is urlparse(name).path.
func fileURLPath(name string) string {
	u := archiveParseURL(name)
	return u.path
}

func fileCachedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	saltenv := pyfmt.Str(c.Args.Get("saltenv"))
	return fileCached(ctx, c, ret, name, c.Args.Get("source_hash"), c.Args.Get("source_hash_name"), c.Args.Bool("skip_verify"), c.Args.Bool("use_etag"), saltenv)
}

// fileCached is the body of file.cached, shared with archive.extracted.
func fileCached(ctx context.Context, c *states.Call, ret states.Ret, name string, sourceHash, sourceHashName any, skipVerify, useEtag bool, saltenv string) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	scheme := fileScheme(name)
	if !skipVerify && !payload.Truthy(sourceHash) && !useEtag && fileRemoteProtos[scheme] {
		ret.Comment = fmt.Sprintf("Unable to verify upstream hash of source file %s, please set source_hash or set skip_verify or use_etag to True", name)
		return ret, nil
	}
	var sum *fileSum
	if payload.Truthy(sourceHash) {
		s, err := r.sourceSum(name, name, sourceHash, sourceHashName)
		if err != nil {
			ret.Comment = sbErrText(err)
			return ret, nil
		}
		sum = s
	}
	htype := r.hashType()
	if sum != nil && sum.htype != "" {
		htype = sum.htype
	}
	if scheme == "" || scheme == "file" {
		full := fileRealpath(fileExpandUser(fileURLPath(name)))
		if !fileExists(full) {
			ret.Comment = fmt.Sprintf("File %s is not present on the minion", full)
			return ret, nil
		}
		if !skipVerify && sum != nil {
			local, err := fileHashFile(full, htype)
			if err != nil {
				ret.Comment = sbErrText(err)
				return ret, nil
			}
			if local == sum.hsum {
				ret.Result = states.True
				ret.Comment = fmt.Sprintf("File %s is present on the minion and has hash %s", full, local)
			} else {
				ret.Comment = fmt.Sprintf("File %s is present on the minion, but the hash (%s) does not match the specified hash (%s)", full, local, sum.hsum)
			}
			return ret, nil
		}
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("File %s is present on the minion", full)
		return ret, nil
	}
	var preHash any
	if lc, err := sbExec(ctx, c, "cp.is_cached", []any{name}, payload.NewMap("saltenv", saltenv)); err == nil && payload.Truthy(lc) {
		if h, err := fileHashFile(payload.Text(lc), htype); err == nil {
			preHash = h
		}
	}
	var hsum any
	if sum != nil {
		hsum = sum.hsum
	}
	local, err := sbExec(ctx, c, "cp.cache_file", []any{name}, payload.NewMap("saltenv", saltenv, "source_hash", hsum, "use_etag", useEtag))
	if err != nil {
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	if !payload.Truthy(local) {
		ret.Comment = fmt.Sprintf("Failed to cache %s, check minion log for more information", name)
		return ret, nil
	}
	lp := payload.Text(local)
	postHash, err := fileHashFile(lp, htype)
	if err != nil {
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	if !pyfmt.Equal(preHash, postHash) {
		ret.Changes.Set("hash", payload.NewMap("old", preHash, "new", postHash))
	}
	if !skipVerify && sum != nil {
		if postHash == sum.hsum {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("File is already cached to %s with hash %s", lp, postHash)
		} else {
			ret.Comment = fmt.Sprintf("File is cached to %s, but the hash (%s) does not match the specified hash (%s)", lp, postHash, sum.hsum)
		}
		return ret, nil
	}
	ret.Result = states.True
	ret.Comment = "File is cached to " + lp
	return ret, nil
}

func fileNotCachedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	return fileNotCached(ctx, c, ret, name, pyfmt.Str(c.Args.Get("saltenv")))
}

// fileNotCached is the body of file.not_cached.
func fileNotCached(ctx context.Context, c *states.Call, ret states.Ret, name, saltenv string) (states.Ret, error) {
	if s := fileScheme(name); s == "" || s == "file" {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("File %s is a local path, no action taken", fileRealpath(fileExpandUser(fileURLPath(name))))
		return ret, nil
	}
	lc, _ := sbExec(ctx, c, "cp.is_cached", []any{name}, payload.NewMap("saltenv", saltenv))
	if !payload.Truthy(lc) {
		ret.Result = states.True
		ret.Comment = name + " is not cached"
		return ret, nil
	}
	p := payload.Text(lc)
	if err := os.Remove(p); err != nil {
		ret.Comment = fmt.Sprintf("Failed to delete %s: %s", p, filePyOSError(err))
		return ret, nil
	}
	ret.Result = states.True
	ret.Changes.Set("deleted", true)
	ret.Comment = p + " was deleted"
	return ret, nil
}
