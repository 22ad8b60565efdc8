#!/usr/bin/env bash
# Usage: plant-hostile-objects.sh BACKING OUTSIDE SYMFILE RELSYM FIFO DEVICE HARDLINK SYMDIR
#   METADIR LONG DOTDOT DOT SLASH NUL
# In BACKING (of an unmounted vault; OUTSIDE its sibling, made by make-outside-tree.sh), the
# backing entries of what make-plant-sites.sh made are replaced: symlinks to OUTSIDE
# (absolute and ..-relative), a FIFO, a device node, a hard link to a file outside, a
# symlink in place of a directory, of a directory's metadata and of the out-of-line link
# store, and a FIFO in place of a long name's sidecar; entries whose stored names say `.`,
# `..`, `a/b` and one with a NUL are added. Prints the kinds of three planted entries.
# One command a line, so `set -e` stops at the first that fails (it ignores failures inside
# `&&` lists); names as `./NAME`, since a base64url name may start with `-`.
set -euo pipefail
backing=$1
outside=$2
symfile=$3 relsym=$4 fifo=$5 device=$6 hardlink=$7 symdir=$8 metadir=$9 long=${10}
dotdot=${11} dot=${12} slash=${13} nul=${14}
cd "$backing"
rm "./$symfile"
ln -s "$outside/file" "./$symfile"
rm "./$relsym"
ln -s ../outside/file "./$relsym"
rm "./$fifo"
mkfifo "./$fifo"
rm "./$device"
mknod "./$device" c 1 5
rm "./$hardlink"
ln "$outside/linked" "./$hardlink"
rm -r "./$symdir"
ln -s "$outside/dir" "./$symdir"
rm "./$metadir/protfs.dir"
ln -s "$outside/file" "./$metadir/protfs.dir"
rm "./$long.name"
mkfifo "./$long.name"
rm -r protfs.links
ln -s "$outside/dir" protfs.links
touch "./$dotdot" "./$dot"
mkdir "./$slash"
ln -s ../outside "./$nul"
stat -c %F "./$fifo" "./$device" "./$symfile"
