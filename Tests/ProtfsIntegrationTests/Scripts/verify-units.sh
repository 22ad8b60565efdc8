#!/usr/bin/env bash
# systemd-analyze verify on the repository's units (SystemdUnitTests). Argument: the directory
# of the built protfs and protfsctl, which stand in for /usr/local/bin (verify checks that
# ExecStart names an executable). Templates are verified through an instance. Any message
# counts as a failure; a deliberately broken copy must fail, or the check proves nothing.
set -euo pipefail
built=$1
units=$(cd "$(dirname "$0")/../../../systemd" && pwd)
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
verify verify "$scratch/protfs@alice.service"
verify --user verify "$scratch/protfs-follow@home-alice-Vault.service"
echo "units verified"

sed 's/^Type=notify$/Type=notifyy/' "$scratch/protfs@.service" >"$scratch/broken@.service"
ln -s broken@.service "$scratch/broken@alice.service"
if verify verify "$scratch/broken@alice.service" >/dev/null; then
    echo "a broken unit passed verification" >&2
    exit 1
fi
echo "a broken unit fails"
