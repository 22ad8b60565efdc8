#!/bin/bash
# After `protfsctl lock --now` a whenUnlocked secret is locked and an afterFirstUnlock one is
# not; an Unlock with no agent to ask completes dismissed; Lock from a client locks the vault.
# Usage: secret-service-lock.sh PROTFSCTL MOUNTPOINT UNLOCK-PROMPT-SCRIPT
set -euo pipefail
protfsctl=$1 mountpoint=$2 prompt=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
printf 'day' | secret-tool store --label=Day app lockcheck kind day
printf 'night' | secret-tool store --label=Night app lockcheck kind night protfs:accessible afterFirstUnlock
grep -q afterFirstUnlock <<<"$("$protfsctl" item list "$mountpoint" --attributes '{"kind":"night"}')" || fail "accessibility from protfs:accessible"
"$protfsctl" lock "$mountpoint" --now
secret-tool lookup app lockcheck kind day && fail "a whenUnlocked secret was read while locked"
[ "$(secret-tool lookup app lockcheck kind night)" = night ] || fail "an afterFirstUnlock secret was not read while locked"
printf 'x' | secret-tool store --label=New app lockcheck kind new && fail "a whenUnlocked item was made while locked"
/usr/bin/python3 "$prompt"
echo ok
