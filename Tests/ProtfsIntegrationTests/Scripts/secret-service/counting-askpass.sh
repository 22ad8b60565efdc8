#!/bin/sh
# An askpass program for the Secret Service provider's prompts (SecretServiceTests): counts
# its runs in $PROMPT_SCRATCH/agents, waits (30 s at most) until $PROMPT_SCRATCH/release
# exists, then prints the passcode in $PROMPT_SCRATCH/passcode.
echo run >> "$PROMPT_SCRATCH/agents"
for _ in $(seq 300); do
    [ -e "$PROMPT_SCRATCH/release" ] && break
    sleep 0.1
done
cat "$PROMPT_SCRATCH/passcode"
