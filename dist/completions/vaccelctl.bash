# vaccelctl(1) completion for bash                          -*- shell-script -*-
#
# dist/completions/vaccelctl.bash - installed as
# /usr/share/bash-completion/completions/vaccelctl (tools/vaccelctl's CMake
# install rules; the vaccelctl package), which bash-completion loads the
# first time vaccelctl is completed; without bash-completion, source it.
#
# Completes vaccelctl's commands and the commands under them (limits
# get|set|reset|mine, cdi generate|hook, cdi hook create|remove), each
# command's options, the global options (-v -q --socket --version -h) after
# any command, models (*.tosa, *.onnx), -i/--input and --variable as
# [NAME=]FILE.npy, directories for --output-dir, --priority's values, and
# for -d/--device: auto, cpu and the kind:N of each line that
# `vaccelctl devices -L` prints within a second (nothing more when it does
# not answer in time). `import` is offered only where the vaccelctl being
# completed lists it (a build with the ONNX importer).
#
# Needs nothing of bash-completion: it joins the pieces bash splits a word
# into at '=' and ':' itself. tests/e2e/completions.sh checks it against
# `vaccelctl --help`: every command at its place, run's options. A command
# or option added to tools/vaccelctl/src/main.cpp goes in _vaccelctl_spec.

# _vaccelctl_spec COMMAND: what the command ("", "run", "limits set", ...)
# takes: its commands (subs), its options (opts), those of them that take
# a value (args), and its positional argument (pos: model, onnx or none).
_vaccelctl_spec()
{
    subs='' opts='' args='' pos=''
    case $1 in
    '')
        subs='devices run import sessions limits tenants containers cdi metrics'
        ;;
    devices)
        opts='--json -L --list'
        ;;
    run)
        opts='-i --input --variable -o --output-dir -d --device -n --repeat --warmup --json'
        args='-i --input --variable -o --output-dir -d --device -n --repeat --warmup'
        pos=model
        ;;
    import)
        opts='-o --output --input-shape'
        args=$opts
        pos=onnx
        ;;
    sessions | tenants | containers | 'limits get' | 'limits mine')
        opts='--json'
        ;;
    limits)
        subs='get set reset mine'
        ;;
    'limits set')
        args='--uid --gid --cgroup --memory --contexts --buffers --programs --queues --events
            --gates --sessions --weight --priority --device-share --context-memory
            --context-buffers --context-programs --context-queues --context-events
            --context-gates'
        opts="$args --default --json"
        ;;
    'limits reset')
        args='--uid --gid --cgroup'
        opts="$args --default --json"
        ;;
    cdi)
        subs='generate hook'
        ;;
    'cdi generate')
        args='-o --output --hook-program --config --daemon-program'
        opts="$args --socket-only"
        ;;
    'cdi hook')
        subs='create remove'
        ;;
    'cdi hook create')
        args='--devices'
        opts=$args
        ;;
    esac
    # Every command has -h/--help (among the global options below).
    return 0
}

# Accepted after any command (the parser falls through to the top).
_vaccelctl_global_opts='-v --verbose -q --quiet --socket --version -h --help'

# _vaccelctl_words: words and cword from COMP_WORDS and COMP_CWORD, with
# the pieces bash split at '=' and ':' joined again where the line has no
# blank between them ("-i" "x" "=" "a.npy" -> "-i" "x=a.npy"; "cuda" ":"
# "0" -> "cuda:0").
_vaccelctl_words()
{
    local line=${COMP_LINE-} i piece previous='' blank
    words=()
    cword=${COMP_CWORD:-0}
    if [[ -z $line ]]; then
        words=("${COMP_WORDS[@]}")
        return 0
    fi
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        piece=${COMP_WORDS[i]}
        blank=0
        if [[ $line == [[:blank:]]* ]]; then
            blank=1
            line=${line#"${line%%[![:blank:]]*}"}
        fi
        line=${line#"$piece"}
        if ((i > 1 && !blank)) && [[ $piece =~ ^[=:]+$ || $previous =~ ^[=:]+$ ]]; then
            words[${#words[@]} - 1]+=$piece
        else
            words+=("$piece")
        fi
        if ((i == COMP_CWORD)); then
            cword=$((${#words[@]} - 1))
        fi
        previous=$piece
    done
    return 0
}

# _vaccelctl_reply CANDIDATE...: COMPREPLY, those that start with cur, less
# the part of cur up to its last '=' or ':' that bash does not replace.
_vaccelctl_reply()
{
    local candidate lead='' breaks=''
    [[ ${COMP_WORDBREAKS-} == *=* ]] && breaks+='='
    [[ ${COMP_WORDBREAKS-} == *:* ]] && breaks+=':'
    [[ -n $breaks && $cur == *[$breaks]* ]] && lead=${cur%"${cur##*["$breaks"]}"}
    for candidate in "$@"; do
        [[ $candidate == "$cur"* ]] && COMPREPLY+=("${candidate#"$lead"}")
    done
    return 0
}

# _vaccelctl_files PART [EXTENSION...]: the files under PART ending in
# .EXTENSION (any file without one) and the directories, as file names;
# with the single EXTENSION "/", the directories alone.
_vaccelctl_files()
{
    local part=$1 extension
    shift
    # Roughly unquoted: a leading quote, backslashes.
    case $part in
    \'*) part=${part#\'} ;;
    \"*) part=${part#\"} ;;
    *) part=${part//\\/} ;;
    esac
    compopt -o filenames 2>/dev/null
    if [[ $# -eq 1 && $1 == / ]]; then
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$part")
        return 0
    fi
    if (($# == 0)); then
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$part")
        return 0
    fi
    for extension; do
        mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -X "!*.$extension" -- "$part")
    done
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$part")
    return 0
}

# _vaccelctl_program: the vaccelctl being completed, as a path, or fail.
_vaccelctl_program()
{
    type -P -- "${words[0]}" 2>/dev/null
}

# _vaccelctl_has_import: whether the vaccelctl being completed lists
# `import` in its --help (asked once per program; offered when it cannot
# be asked).
_vaccelctl_has_import()
{
    local program help
    program=$(_vaccelctl_program) || return 0
    command -v timeout >/dev/null || return 0
    if [[ $program != "${_vaccelctl_import_program-}" ]]; then
        _vaccelctl_import_program=$program
        _vaccelctl_import=yes
        if help=$(timeout 1 "$program" --help 2>/dev/null </dev/null); then
            [[ $help == *$'\n  import '* ]] || _vaccelctl_import=no
        fi
    fi
    [[ $_vaccelctl_import == yes ]]
}

# _vaccelctl_devices SOCKET: auto, cpu, then the kind:N of each device
# `vaccelctl devices -L` lists ("[0] cpu:0  NAME  (MEMORY, STATE)") when it
# answers within a second, through SOCKET when one was named.
_vaccelctl_devices()
{
    local program index kind rest
    printf '%s\n' auto cpu
    program=$(_vaccelctl_program) || return 0
    command -v timeout >/dev/null || return 0
    timeout 1 "$program" -q ${1:+--socket "$1"} devices -L 2>/dev/null </dev/null |
        while read -r index kind rest; do
            [[ $index == \[*\] && $kind == *:* ]] && printf '%s\n' "$kind"
        done
    return 0
}

# _vaccelctl_value OPTION: the values of OPTION (of the command in path).
_vaccelctl_value()
{
    local candidates=()
    case $1 in
    --socket | --hook-program | --output | --config | --daemon-program)
        if [[ $1 == --output && $path == import ]]; then
            _vaccelctl_files "$cur" tosa
        else
            _vaccelctl_files "$cur"
        fi
        ;;
    -o)
        case $path in
        run) _vaccelctl_files "$cur" / ;;
        import) _vaccelctl_files "$cur" tosa ;;
        *) _vaccelctl_files "$cur" ;;
        esac
        ;;
    --output-dir)
        _vaccelctl_files "$cur" /
        ;;
    -i | --input | --variable)
        # NAME=FILE.npy, or a plain FILE.npy.
        local name=''
        [[ $cur == *=* ]] && name=${cur%%=*}=
        _vaccelctl_files "${cur#"$name"}" npy
        ;;
    -d | --device)
        mapfile -t candidates < <(_vaccelctl_devices "$socket")
        _vaccelctl_reply "${candidates[@]}"
        ;;
    --priority)
        _vaccelctl_reply latency batch
        ;;
    --devices)
        _vaccelctl_reply all
        ;;
    esac
    return 0
}

_vaccelctl()
{
    local words cword cur path='' subs opts args pos i word valueof='' positionals=0 socket=''
    local IFS=$' \t\n'
    COMPREPLY=()
    _vaccelctl_words
    cur=${words[cword]-}
    _vaccelctl_spec ''
    _vaccelctl_has_import || subs=${subs/import /}

    # The words before the cursor: the command path, the options' values
    # skipped (an option just before the cursor wants its value).
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        case $word in
        --socket=*)
            socket=${word#*=}
            ;;
        --*=*) ;;
        -*)
            if [[ " $args --socket " == *[[:space:]]"$word"[[:space:]]* ]]; then
                if ((i + 1 == cword)); then
                    valueof=$word
                elif [[ $word == --socket ]]; then
                    socket=${words[i + 1]}
                fi
                i=$((i + 1))
            fi
            ;;
        *)
            if [[ -n $subs && " $subs " == *" $word "* ]]; then
                path=${path:+$path }$word
                _vaccelctl_spec "$path"
            else
                positionals=$((positionals + 1))
            fi
            ;;
        esac
    done

    # --option=VALUE
    if [[ -z $valueof && $cur == --*=* && " $args --socket " == *[[:space:]]"${cur%%=*}"[[:space:]]* ]]; then
        valueof=${cur%%=*}
        cur=${cur#*=}
    fi
    if [[ -n $valueof ]]; then
        # A shell variable for the socket is left to the user.
        [[ $socket == *\$* ]] && socket=''
        _vaccelctl_value "$valueof"
        return 0
    fi

    if [[ $cur == -* ]]; then
        # shellcheck disable=SC2086 # word lists
        _vaccelctl_reply $opts $_vaccelctl_global_opts
    elif [[ -n $subs ]]; then
        # shellcheck disable=SC2086
        _vaccelctl_reply $subs
    elif [[ -n $pos && $positionals -eq 0 ]]; then
        if [[ $pos == model ]]; then
            _vaccelctl_files "$cur" tosa onnx
        else
            _vaccelctl_files "$cur" onnx
        fi
    else
        # shellcheck disable=SC2086
        _vaccelctl_reply $opts
    fi
    return 0
} &&
    complete -F _vaccelctl vaccelctl

# ex: filetype=sh
