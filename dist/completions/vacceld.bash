# vacceld(8) completion for bash                            -*- shell-script -*-
#
# dist/completions/vacceld.bash - installed as
# /usr/share/bash-completion/completions/vacceld (userspace/daemon's CMake
# install rules; the vacceld package), which bash-completion loads the
# first time vacceld is completed; without bash-completion, source it.
#
# Completes vacceld's options and their values: files for --config,
# --check-config, --socket, --server-node, --cdi-spec and --cdi-hook, the
# groups for --admin-group, the levels of --log-level and the backends of
# --devices (after a comma too). Needs nothing of bash-completion.
# tests/e2e/completions.sh checks the options against `vacceld --help`; an
# option added to userspace/daemon/src/main.cpp goes in _vacceld_opts.

_vacceld_opts='-h --help --version --socket --config --admin-group --log-level --devices
    --no-kernel --kernel --kernel-only --server-node --cdi-spec --cdi-hook --check-config
    --list-devices --workers-only'

# _vacceld_reply CANDIDATE...: COMPREPLY, those that start with cur.
_vacceld_reply()
{
    local candidate
    for candidate in "$@"; do
        [[ $candidate == "$cur"* ]] && COMPREPLY+=("$candidate")
    done
    return 0
}

_vacceld()
{
    local IFS=$' \t\n'
    local cur=${COMP_WORDS[COMP_CWORD]-} prev='' option
    COMPREPLY=()
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # --option=VALUE: bash makes "=" a word of its own.
    if [[ $cur == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]} cur=''
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    option=$prev

    case $option in
    --config | --check-config | --socket | --server-node | --cdi-spec | --cdi-hook)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
        ;;
    --admin-group)
        mapfile -t COMPREPLY < <(compgen -g -- "$cur")
        return 0
        ;;
    --log-level)
        _vacceld_reply trace debug info warn error
        return 0
        ;;
    --devices)
        # A comma separated list: NAME (every device of a backend), NAME:*,
        # NAME:N; the backends are offered after the last comma.
        local done=''
        [[ $cur == *,* ]] && done=${cur%,*},
        local name
        for name in cpu vulkan cuda; do
            [[ $done$name == "$cur"* ]] && COMPREPLY+=("$done$name")
        done
        return 0
        ;;
    esac

    # shellcheck disable=SC2086 # a word list
    _vacceld_reply $_vacceld_opts
    return 0
} &&
    complete -F _vacceld vacceld

# ex: filetype=sh
