#!/usr/bin/env bash
# A sealed symlink target copied over another symlink's in the backing directory must be
# damage (EIO), never followed (docs/FORMAT.md: every sealed object bound to its object).
#   make MOUNT                  symlinks on the mount
#   plant BACKING EVIL VICTIM DIRVICTIM LONGEVIL LONGVICTIM RENAMED SWAPPED
#                               backing paths (relative to BACKING) of those symlinks:
#                               targets copied, one entry renamed onto another's name
#   check MOUNT                 through the mount: each planted one is EIO, the rest read
set -euo pipefail
mode=$1
long() { head -c "$2" /dev/zero | tr '\0' "$1"; }
case $mode in
make)
    cd "$2"
    ln -s evil-target evil
    ln -s safe-target victim
    mkdir d
    ln -s safe-target d/victim
    ln -s "$(long e 3500)" longevil
    ln -s "$(long s 3500)" longvictim
    ln -s renamed-target renamed
    ln -s swapped-target swapped
    ;;
plant)
    cd "$2"
    evil=$3 victim=$4 dirvictim=$5 longevil=$6 longvictim=$7 renamed=$8 swapped=$9
    for pair in "$evil:$victim" "$evil:$dirvictim" "$longevil:$longvictim"; do
        source=${pair%%:*} destination=${pair#*:}
        target=$(readlink "./$source")
        rm "./$destination"
        ln -s "$target" "./$destination"
    done
    mv "./$renamed" "./$swapped"
    ;;
check)
    cd "$2"
    for name in victim d/victim longvictim swapped; do
        if out=$(readlink -v "$name" 2>&1); then echo "$name: read as '$out'"; exit 1; fi
        case $out in *"Input/output error"*) ;; *) echo "$name: readlink said '$out', not EIO"; exit 1 ;; esac
        if out=$(cat "$name" 2>&1); then echo "$name: followed"; exit 1; fi
        case $out in *"Input/output error"*) ;; *) echo "$name: cat said '$out', not EIO"; exit 1 ;; esac
    done
    [ "$(readlink evil)" = evil-target ]
    [ "$(readlink longevil)" = "$(long e 3500)" ]
    [ "$(ls | sort | tr '\n' ' ')" = "d evil longevil longvictim swapped victim " ]
    # Damage can be removed like anything else.
    rm victim d/victim longvictim swapped
    ;;
*) echo "usage: $0 make|plant|check ..." >&2; exit 2 ;;
esac
