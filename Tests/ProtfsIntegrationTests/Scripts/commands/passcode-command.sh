#!/usr/bin/env bash
# A passcode command: records its arguments and environment in the file $1, then prints the
# first line of the file $2 (the passcode) and a second line that must be ignored.
set -euo pipefail
{ printf '%s\n' "$0" "$@"; env; } > "$1"
head -n 1 "$2"
echo "a second line, ignored"
