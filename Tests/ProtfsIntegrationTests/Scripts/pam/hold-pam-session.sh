#!/bin/sh
# Run by pam_exec after pam_protfs in a session stage (PamStack.holdingLine): when DIR/hold
# exists, takes it, writes the pid of its parent (the pamtester holding the session) to
# DIR/holding, and waits until DIR/holding is gone: the session stays open meanwhile.
# Usage: hold-pam-session.sh DIR
dir=$1
rm "$dir/hold" 2>/dev/null || exit 0
echo "$PPID" > "$dir/holding.new"
mv "$dir/holding.new" "$dir/holding"
while [ -e "$dir/holding" ]; do sleep 0.05; done
exit 0
