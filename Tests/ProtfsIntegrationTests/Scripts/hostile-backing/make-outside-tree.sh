#!/usr/bin/env bash
# Usage: make-outside-tree.sh OUTSIDE. A directory, a file and a file to hard-link, with fixed
# modes and times, beside the backing directory: what planted objects point at.
set -euo pipefail
outside=$1
mkdir -p "$outside/dir"
printf 'outside secret' > "$outside/file"
printf 'outside, hard-linked' > "$outside/linked"
chmod 0640 "$outside/file" "$outside/linked"
touch -d '2001-02-03 04:05:06' "$outside/file" "$outside/linked" "$outside/dir"
