#!/usr/bin/env bash
# Usage: flip-byte-of-sized-file.sh BACKING SIZE. The one file of SIZE bytes under BACKING
# gets its byte at offset 5000 changed.
set -euo pipefail
backing=$1
size=$2
file=$(find "$backing" -type f -size "${size}c")
[ "$(echo "$file" | wc -l)" = 1 ]; [ -n "$file" ]
byte=$(dd if="$file" bs=1 skip=5000 count=1 status=none | od -An -tu1 | tr -d ' ')
printf "\x$(printf %02x $(( (byte + 1) % 256 )))" | dd of="$file" bs=1 seek=5000 conv=notrunc status=none
