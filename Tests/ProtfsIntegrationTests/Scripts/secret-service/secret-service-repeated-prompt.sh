#!/bin/bash
# A locked item, then one Unlock prompt run 200 times (secret-service-repeated-prompt.py).
# Usage: secret-service-repeated-prompt.sh PROTFSCTL MOUNTPOINT PROMPT-SCRIPT
set -euo pipefail
protfsctl=$1 mountpoint=$2 prompt=$3
printf 'day' | secret-tool store --label=Day app promptcheck kind day
"$protfsctl" lock "$mountpoint" --now
/usr/bin/python3 "$prompt"
