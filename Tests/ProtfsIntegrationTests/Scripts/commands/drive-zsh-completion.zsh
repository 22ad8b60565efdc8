#!/usr/bin/env zsh
# Usage: drive-zsh-completion.zsh SCRIPT LINE : runs an interactive zsh in a pseudo-terminal
# with compsys loaded and SCRIPT as its tool's completion, types LINE and a TAB, and prints
# every match the completion system offered, one a line (caught as compadd adds them).
# What the shell printed besides goes to standard error; exit 3 if it did not answer in time.
emulate -L zsh
zmodload zsh/zpty zsh/datetime || exit 2
script=$1 line=$2
work=$(mktemp -d) || exit 2
cleanup() { zpty -d shell 2>/dev/null; rm -rf $work }
trap cleanup EXIT
cat > $work/.zshrc <<ZSHRC
unsetopt prompt_sp; unset zle_bracketed_paste
autoload -U compinit && compinit -u -D -d $work/compdump
source ${(q)script}
compadd() {
    local -a caught
    builtin compadd -O caught "\$@"
    (( \${#caught} )) && print -rl -- \$caught >> $work/matches
    builtin compadd "\$@"
}
PS1='<<READY>>'
ZSHRC
# Reads the shell's output until it matches PATTERN, for at most 10 seconds.
output=""
await() {
    local chunk deadline=$((EPOCHREALTIME + 10))
    while [[ $output != $~1 ]]; do
        (( EPOCHREALTIME < deadline )) || { print -r -- "zsh did not answer: $output" >&2; exit 3 }
        zpty -r -t shell chunk && output+=$chunk || sleep 0.05
    done
}
export ZDOTDIR=$work
zpty shell zsh -i
await '*<<READY>>*'
output=""
zpty -w -n shell "$line"$'\t'
zpty -w shell $'\C-e\C-u'"print '<<DO''NE>>'"
await '*<<DONE>>*<<READY>>*'
[[ -f $work/matches ]] && sort -u $work/matches
print -r -- $output | grep -a -E 'unrecognized|not found|bad |error' >&2
exit 0
