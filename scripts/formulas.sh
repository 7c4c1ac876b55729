#!/usr/bin/env bash
# formulas.sh: exports the saltstack-formulas repositories listed in
# testdata/formulas.txt, each at its pinned commit, into
# $GSALT_FORMULAS_DIR/<name> (e.g. $GSALT_FORMULAS_DIR/apache-formula), for
# the formula corpus test:
#
#   GSALT_FORMULAS_DIR=/tmp/formulas ./scripts/formulas.sh
#   GSALT_FORMULAS_DIR=/tmp/formulas GSALT_SALT_SRC=/path/to/salt \
#     go test ./internal/interop -run Formulas -v
#
# Repositories come from a local mirror when one is there
# ($GSALT_FORMULAS_MIRROR/<owner>+<name>/repo, a bare git directory or a
# work tree's .git; default
# /work/.mirror), else they are cloned from GitHub into
# $GSALT_FORMULAS_DIR/.git-cache. Nothing is written inside the repository.
set -euo pipefail
: "${GSALT_FORMULAS_DIR:?set GSALT_FORMULAS_DIR to a scratch directory}"
mirror=${GSALT_FORMULAS_MIRROR:-/work/.mirror}
cd "$(dirname "$0")/.."
list=testdata/formulas.txt
mkdir -p "$GSALT_FORMULAS_DIR"
n=0
while read -r repo commit _; do
  [[ -z $repo || $repo == \#* ]] && continue
  name=${repo#*/}
  gitdir="$mirror/${repo/\//+}/repo"
  # a snapshot is either a bare git directory or a work tree with .git
  [ -d "$gitdir/.git" ] && gitdir="$gitdir/.git"
  if ! git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    gitdir="$GSALT_FORMULAS_DIR/.git-cache/${repo/\//+}.git"
    if [ ! -d "$gitdir" ]; then
      git clone --quiet --bare "https://github.com/$repo.git" "$gitdir"
    fi
    git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null ||
      git --git-dir="$gitdir" fetch --quiet origin "$commit"
  fi
  dest="$GSALT_FORMULAS_DIR/$name"
  rm -rf "$dest"
  mkdir -p "$dest"
  # a snapshot may lack its largest blobs (listed in its tree, absent):
  # then the tree is checked out without them, and they are named
  missing=$(git --git-dir="$gitdir" ls-tree -r --format='%(objectname)' "$commit" |
    git --git-dir="$gitdir" cat-file --batch-check='%(objectname) %(objecttype)' 2>/dev/null |
    awk '$2 == "missing" {print $1}')
  if [ -z "$missing" ]; then
    git --git-dir="$gitdir" archive "$commit" | tar -x -C "$dest"
  else
    index=$(mktemp)
    GIT_INDEX_FILE=$index git --git-dir="$gitdir" read-tree "$commit"
    for hash in $missing; do
      path=$(git --git-dir="$gitdir" ls-tree -r "$commit" | awk -v h="$hash" '$3 == h {sub(/^[^\t]*\t/, ""); print}')
      echo "formulas.sh: $repo: $path is not in the mirror; exported without it" >&2
      GIT_INDEX_FILE=$index git --git-dir="$gitdir" update-index --force-remove -- "$path"
    done
    GIT_INDEX_FILE=$index git --git-dir="$gitdir" --work-tree="$dest" checkout-index -a
    rm -f "$index"
  fi
  echo "$dest ($repo@${commit:0:12})"
  n=$((n + 1))
done < "$list"
echo "formulas.sh: $n formulas exported into $GSALT_FORMULAS_DIR"
