#!/bin/bash
# Usage: others-beside-a-descriptor-hog.sh MOUNT ATTACKER VICTIM PROTFSCTL PASSCODE_FILE
# ATTACKER (a user name) holds as many files open on MOUNT as its limits allow
# (hold-every-open.py). While it holds them, VICTIM creates, writes, lists and reads files, and root
# creates one, then locks, unlocks, changes the passcode and unlocks with the new one. Each of
# those must succeed, and the attacker must have been refused with EMFILE or ENFILE.
set -u
mount=$1 attacker=$2 victim=$3 protfsctl=$4 passcode_file=$5
here=$(dirname "$(readlink -f "$0")")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
as() { local user=$1; shift; setpriv --reuid="$user" --regid="$user" --init-groups "$@"; }

mkdir -m 0755 "$mount/hog" "$mount/victim" || exit 1
chown "$attacker:" "$mount/hog" && chown "$victim:" "$mount/victim" || exit 1

coproc HOG { as "$attacker" /usr/bin/python3 "$here/hold-every-open.py" "$mount/hog"; }
hog_pid=$HOG_PID
if ! read -r -t 120 report <&"${HOG[0]}"; then
    echo "the attacker reported nothing"
    exit 1
fi
echo "attacker: $report"

failed=0
check() {
    local what=$1 output
    shift
    if ! output=$("$@" 2>&1); then
        echo "FAILED while the attacker holds its files: $what: $output"
        failed=1
    fi
}
# Several at once too: each holds a node and a backing descriptor in the daemon. More files
# than one user's share of nodes (86 with a limit of 1,200): what it does not keep in use is
# forgotten for it, so a user walking a large directory is not refused.
check "the other user creates, writes, lists and reads files" as "$victim" /bin/bash -c '
    for i in $(seq 1 300); do echo "data $i" > "$1/f$i" || exit 1; done
    exec 3<"$1/f1" 4<"$1/f2" 5<"$1/f3" 6<"$1/f4"
    [ "$(ls -l "$1" | grep -c "^-")" = 300 ] || exit 1
    for i in $(seq 1 300); do [ "$(cat "$1/f$i")" = "data $i" ] || exit 1; done' - "$mount/victim"
check "root creates and reads a file" /bin/bash -c 'echo root > "$1/root-file" && [ "$(cat "$1/root-file")" = root ]' - "$mount"
check "root locks" "$protfsctl" lock --now "$mount"
check "root unlocks" "$protfsctl" unlock "$mount" --passcode-file "$passcode_file"
printf '%s\n%s\n' "$(cat "$passcode_file")" "a new passcode for the hog test" > "$scratch/passwd-input"
printf '%s\n' "a new passcode for the hog test" > "$scratch/new-passcode"
check "root changes the passcode" /bin/bash -c '"$1" passwd "$2" < "$3"' - "$protfsctl" "$mount" "$scratch/passwd-input"
check "root locks again" "$protfsctl" lock --now "$mount"
check "root unlocks with the new passcode" "$protfsctl" unlock "$mount" --passcode-file "$scratch/new-passcode"
check "root reads its file" /bin/bash -c '[ "$(cat "$1/root-file")" = root ]' - "$mount"

eval "exec ${HOG[1]}>&-"
wait "$hog_pid"
hog_status=$?
if [ "$hog_status" -ne 0 ]; then
    echo "FAILED: the attacker's open was not refused with EMFILE or ENFILE ($report)"
    failed=1
fi
exit $failed
