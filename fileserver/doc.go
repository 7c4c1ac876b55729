// Package fileserver is Salt 3006's file server with its "roots" backend
// (salt/fileserver/__init__.py's Fileserver over salt/fileserver/roots.py):
// the master answers the minions' _file_envs, _file_list,
// _file_list_emptydirs, _dir_list, _symlink_list, _file_find, _file_hash,
// _file_hash_and_stat and _serve_file requests with it, and a masterless
// minion (file_client: local) asks it the same loads directly, as Salt's
// FSChan does.
//
// A Roots is built from file_roots (saltenv → directories, searched in
// order, the first directory holding a path wins; an "__env__" entry serves
// every saltenv not listed, with "__env__" in its directories replaced by
// the saltenv's name) and the options file_ignore_regex, file_ignore_glob,
// fileserver_followsymlinks, fileserver_ignoresymlinks, hash_type,
// file_buffer_size and fileserver_backend. Roots.Handle answers a request
// load with the value Salt's master sends back, or an error where Salt's
// handler raises (the master then answers "", like AESFuncs.run_func).
//
// Paths are looked up like Fileserver.find_file: "path?saltenv=dev&index=1"
// query arguments are honoured unless the path is escaped with a leading
// "|", absolute paths and paths containing "../" are refused, and a file
// must resolve (symbolic links followed) inside the root it was found in.
// Ignore rules apply to the lists (matched against the relative path) and
// to lookups (matched against root/path), as in Salt.
//
// Differences from Salt 3006 that remain, all on the safe side:
//
//   - containment is a real path-prefix test: Salt's clean_path compares
//     strings, so a link from /srv/salt to /srv/salt2/x is served by Salt
//     and refused here;
//   - lookups with ?index=N also refuse files whose symbolic links leave the
//     root (Salt's _file_find and _file_hash answer them, _serve_file
//     refuses them);
//   - with an __env__ root, a saltenv that is empty, ".", ".." or contains
//     "/" or NUL is an unknown environment (Salt substitutes it into the
//     directory, which reaches outside the roots);
//   - a followed symbolic link back to a directory being walked is not
//     descended into again (Python's os.walk loops until ELOOP, listing
//     dozens of nested copies); walks are bounded (MaxWalkDepth,
//     MaxWalkEntries);
//   - _file_envs is sorted (Salt returns a set's arbitrary order) and
//     _symlink_list's keys are sorted (Salt uses directory order);
//   - file lists are cached per saltenv and revalidated on every request by
//     the status of each directory and link target walked (Salt serves
//     lists up to fileserver_list_cache_time seconds old); hashes are cached
//     by the file's modification time, change time, size and inode (Salt
//     uses the modification time alone);
//   - file_ignore_regex is compiled with Go's RE2 syntax (Python's \Z is
//     accepted); a pattern RE2 rejects is dropped with a warning, the way
//     Salt drops the patterns Python rejects;
//   - a fsbackend of "-roots" in a list request only leaves roots out of
//     that request (Salt removes it from the master's fileserver_backend
//     for good), and hashes are never shared between two roots' files with
//     the same relative path and modification time (Salt's hash cache
//     mixes them up);
//   - backends other than roots (gitfs, hgfs, minionfs, s3fs, svn, azurefs) are not
//     implemented: when fileserver_backend lacks "roots" nothing is served.
package fileserver
