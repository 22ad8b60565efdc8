#!/bin/bash
# What each client call costs the daemon in control requests (its `requestsServed`, less the
# status that reads it); that an item's Locked follows the daemon's lock state; that the
# provider's kept connection finds the vault again after a remount.
# Usage: secret-service-round-trips.sh PROTFSCTL PROTFS MOUNTPOINT BACKING DEVICE-KEY PASSCODE-FILE
set -euo pipefail
protfsctl=$1 protfs=$2 mountpoint=$3 backing=$4 device_key=$5 passcode_file=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
served() { "$protfsctl" status --json "$mountpoint" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["requestsServed"])'; }
cost() {
    local before after
    before=$(served)
    "$@" >/dev/null
    after=$(served)
    echo $((after - before - 1))
}
keyring_get() {
    PYTHON_KEYRING_BACKEND=keyring.backends.SecretService.Keyring /usr/bin/python3 -c \
        'import keyring; assert keyring.get_password("roundtrips.example.com", "erin") == "kr"'
}
# Whether each item with app=roundtrips is locked, as the Item's Locked property says.
locked() {
    /usr/bin/python3 -c 'import secretstorage
bus = secretstorage.dbus_init()
print(" ".join(str(item.is_locked()).lower() for item in secretstorage.search_items(bus, {"app": "roundtrips"})))'
}
printf 'one' | secret-tool store --label=One app roundtrips
PYTHON_KEYRING_BACKEND=keyring.backends.SecretService.Keyring /usr/bin/python3 -c \
    'import keyring; keyring.set_password("roundtrips.example.com", "erin", "kr")'
secret-tool lookup app roundtrips >/dev/null  # the provider learns the item's path
# SearchItems, then GetSecrets: one request each.
n=$(cost secret-tool lookup app roundtrips)
[ "$n" = 2 ] || fail "secret-tool lookup took $n requests, not 2"
# Its 7 calls that need the daemon: Collection.Locked, SearchItems, the item's Label, Unlock,
# the item's Locked (twice: keyring's unlock, then secretstorage's get_secret), GetSecret.
n=$(cost keyring_get)
[ "$n" = 7 ] || fail "keyring.get_password took $n requests, not 7"
[ "$(locked)" = false ] || fail "the item is locked in an unlocked vault"
"$protfsctl" lock "$mountpoint" --now
[ "$(locked)" = true ] || fail "the item is not locked in a locked vault"
"$protfsctl" unlock "$mountpoint" --passcode-file "$passcode_file"
[ "$(locked)" = false ] || fail "the item is still locked after the unlock"
# The daemon goes and another serves the same vault: the provider's next call reconnects.
fusermount3 -u "$mountpoint"
"$protfs" mount "$backing" "$mountpoint" -o "device_key=$device_key,passcode_file=$passcode_file"
[ "$(secret-tool lookup app roundtrips)" = one ] || fail "no lookup after a remount"
echo ok
