#!/usr/bin/env bash
# Usage: drive-bash-completion.sh SCRIPT FUNCTION WORD... : sources the completion SCRIPT, sets
# COMP_WORDS to the WORDs (the last is the one being completed) and COMP_CWORD to its index,
# calls FUNCTION as bash would, and prints COMPREPLY one entry a line.
set -euo pipefail
script=$1
function=$2
shift 2
# shellcheck source=/dev/null
source "$script"
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMPREPLY=()
set +eu  # as bash runs completion functions
"$function"
printf '%s\n' "${COMPREPLY[@]}"
