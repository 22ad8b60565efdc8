#!/usr/bin/env bash
# Usage: interrupt-at-progress.sh COMMAND [ARGUMENT...] : runs the command (one that reports
# progress as JSON lines on standard error) and sends it SIGINT, as Ctrl-C would, at its
# first progress record; prints "interrupted" if it was still running then, "finished" if it
# ended first. Waits for it to exit either way.
set -u
# Job control: without it bash starts background commands with SIGINT ignored.
set -m
errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
# As at a terminal, whatever the caller ignores (a test runner may ignore SIGINT).
env --default-signal=INT "$@" 2>"$errors" &
pid=$!
for _ in $(seq 1 600); do
    if grep -q '^{' "$errors"; then
        if kill -INT "$pid" 2>/dev/null; then echo interrupted; else echo finished; fi
        wait "$pid"
        exit 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
echo finished
wait "$pid"
