#!/bin/bash
# One user's client on that user's own session bus: "store" keeps a secret, "check" must find
# no secret of anyone else's, by lookup or by search, "unowned" must be refused a store where
# the caller owns no vault, and told why. Usage: secret-service-two-users.sh store|check|unowned
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
case $1 in
store)
    printf 'alice-only' | secret-tool store --label='Private' service private.example.com username alice
    [ "$(secret-tool lookup service private.example.com username alice)" = alice-only ] || fail "the owner's own lookup" ;;
check)
    secret-tool lookup service private.example.com username alice && fail "another user's secret was read"
    [ -z "$(secret-tool search --all service private.example.com 2>&1)" ] || fail "another user's item was found" ;;
unowned)
    if refusal=$(printf 'bob-only' | secret-tool store --label='Default' service default.example.com username bob 2>&1); then
        fail "stored into a vault the caller does not own"
    fi
    case $refusal in *"none of the protfs mounts is a vault of uid $(id -u)"*) ;; *) fail "refused without the reason: $refusal" ;; esac ;;
esac
echo ok
