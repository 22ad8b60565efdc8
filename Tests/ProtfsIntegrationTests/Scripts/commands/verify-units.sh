#!/usr/bin/env bash
# systemd-analyze verify on the repository's units (SystemdUnitTests). Argument: the directory
# of the built protfs and protfsctl, which stand in for /usr/local/bin (verify checks that
# ExecStart names an executable). Templates are verified through an instance. Any message
# counts as a failure; a deliberately broken copy must fail, or the check proves nothing.
set -euo pipefail
built=$1
units=$(cd "$(dirname "$0")/../../../../systemd" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -m 0700 "$scratch/runtime"
export XDG_RUNTIME_DIR=$scratch/runtime   # the user manager's verify needs one

verify() {  # verify [--user] UNIT_FILE: prints what systemd-analyze said, fails if anything
    local said
    said=$(systemd-analyze "$@" 2>&1) || { echo "$said"; return 1; }
    [ -z "$said" ] || { echo "$said"; return 1; }
}

sed "s#/usr/local/bin/#$built/#g" "$units/protfs@.service" >"$scratch/protfs@.service"
sed "s#/usr/local/bin/#$built/#g" "$units/protfs-follow@.service" >"$scratch/protfs-follow@.service"
ln -s protfs@.service "$scratch/protfs@alice.service"
ln -s protfs-follow@.service "$scratch/protfs-follow@home-alice-Vault.service"
sed "s#/usr/local/bin/#$built/#g" "$units/../secret-service/protfs-secret-service.service" >"$scratch/protfs-secret-service.service"
verify verify "$scratch/protfs@alice.service"
verify --user verify "$scratch/protfs-follow@home-alice-Vault.service"
verify --user verify "$scratch/protfs-secret-service.service"
echo "units verified"

# The daemon's unit is hardened without a mount namespace of its own (docs/SYSTEMD.md):
# systemd's own score of its exposure, at most 4.0.
score=$(systemd-analyze security --offline=yes "$scratch/protfs@alice.service" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$score" ] || { echo "systemd-analyze security gave no score" >&2; exit 1; }
awk -v s="$score" 'BEGIN { exit !(s <= 4.0) }' || { echo "protfs@.service exposure $score, above 4.0" >&2; exit 1; }
echo "exposure $score"

sed 's/^Type=notify$/Type=notifyy/' "$scratch/protfs@.service" >"$scratch/broken@.service"
ln -s broken@.service "$scratch/broken@alice.service"
if verify verify "$scratch/broken@alice.service" >/dev/null; then
    echo "a broken unit passed verification" >&2
    exit 1
fi
echo "a broken unit fails"
