#!/bin/bash
# secret-tool against the provider, and the same items through protfsctl item both ways.
# Usage: secret-service-secret-tool.sh PROTFSCTL MOUNTPOINT
set -euo pipefail
# Output is captured before grep reads it: under pipefail, grep -q exiting at its first match
# would fail the pipeline with the writer's EPIPE.
protfsctl=$1 mountpoint=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
printf 'hunter2' | secret-tool store --label='Mail' service mail.example.com username alice xdg:extra one
[ "$(secret-tool lookup service mail.example.com username alice)" = hunter2 ] || fail "lookup after store"
grep -q '^label = Mail$' <<<"$(secret-tool search --all service mail.example.com)" || fail "search shows the label"
# Stored by secret-tool, listed and read by protfsctl as service/account.
grep -q "^mail.example.com	alice	whenUnlocked	Mail	" <<<"$("$protfsctl" item list "$mountpoint")" || fail "item list: $("$protfsctl" item list "$mountpoint")"
[ "$("$protfsctl" item get "$mountpoint" --service mail.example.com --account alice)" = hunter2 ] || fail "item get"
# A replace through secret-tool keeps one item.
printf 'hunter3' | secret-tool store --label='Mail' service mail.example.com username alice xdg:extra one
[ "$("$protfsctl" item list "$mountpoint" --service mail.example.com | wc -l)" = 1 ] || fail "store replaced"
[ "$(secret-tool lookup service mail.example.com username alice)" = hunter3 ] || fail "lookup after replace"
# Stored by protfsctl, found and read by secret-tool.
printf 'tok-9' | "$protfsctl" item add "$mountpoint" --service api.example.com --account bob --label Token
[ "$(secret-tool lookup service api.example.com username bob)" = tok-9 ] || fail "lookup of a protfsctl item"
printf 'tok-10' | "$protfsctl" item add "$mountpoint" --service api.example.com --account carol --attributes '{"team":"blue"}'
[ "$(secret-tool lookup team blue)" = tok-10 ] || fail "lookup by a protfsctl item's attributes"
secret-tool clear service mail.example.com username alice
secret-tool lookup service mail.example.com username alice && fail "lookup after clear"
grep -q '^mail.example.com' <<<"$("$protfsctl" item list "$mountpoint")" && fail "cleared item still listed"
printf 'kept' | secret-tool store --label=Kept service kept.example.com username dave
echo ok
