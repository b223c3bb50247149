#!/usr/bin/env bash
# completions.sh VACCELCTL [VACCELD] - the shell completions (dist/completions)
# and the man page (debian/man/vaccelctl.1) know every command of the real
# vaccelctl, as its --help lists them:
#   - bash: at each command's place (vaccelctl, vaccelctl limits, vaccelctl
#     cdi, vaccelctl cdi hook, after global options too) the completion
#     offers exactly the commands that command's --help lists; after `-` at
#     every command, exactly its options and the global ones of
#     `vaccelctl --help`; and the values: models, [NAME=]FILE.npy, the
#     output directory, --priority, the devices of `vaccelctl devices -L`
#     (kind:N, completed after the colon too); the script is also completed
#     with bash-completion loaded, where it is installed;
#   - VACCELD given: `vacceld -` offers exactly the options of its --help;
#   - zsh: `zsh -n` passes on _vaccelctl and _vacceld, and each names every
#     command and every long option of the --help texts; fails when zsh is
#     not installed (make deps installs it);
#   - the man page has an example (EXAMPLES) of every command and, where
#     groff is installed, formats without a warning.
# Each difference is printed (offered but not in --help: "+", in --help but
# not offered: "-"); the exit status is 1 when there is any.
source "$(dirname "$0")/lib.sh"
ctl=$(realpath "$1")
daemon=${2:+$(realpath "$2")}
root=$(cd "$here/../.." && pwd)
completions=$root/dist/completions
man_page=$root/debian/man/vaccelctl.1

problems=0
problem() {
	echo "FAIL: $*" >&2
	problems=$((problems + 1))
}

# commands_of COMMAND...: the names under "Subcommands:" of COMMAND --help.
commands_of() {
	"$ctl" "$@" --help | awk '/^Subcommands:/ { on = 1; next } /^[^ ]/ { on = 0 }
		on && /^  [a-z]/ { print $1 }' | LC_ALL=C sort
}

# options_of PROGRAM ARGS...: every option name under "Options:" of
# PROGRAM ARGS... --help (-i,--input TEXT -> -i and --input).
options_of() {
	"$@" --help | awk '/^Options:/ { on = 1; next } /^[^ ]/ { on = 0 }
		on && /^  -/ { n = split($1, names, ","); for (i = 1; i <= n; i++) print names[i] }' |
		LC_ALL=C sort -u
}

# same WHAT EXPECTED ACTUAL: the two sorted lists are equal, else a problem
# showing the difference.
same() {
	local what=$1 expected=$2 actual=$3
	if [ "$expected" = "$actual" ]; then
		echo "ok: $what: $(tr '\n' ' ' <<<"$actual")"
	else
		problem "$what:"$'\n'"$(diff <(echo "$expected") <(echo "$actual") | sed -n 's/^> /    + /p; s/^< /    - /p')"
	fi
}

# has WHAT NEEDLE LIST: LIST (one a line) has the line NEEDLE.
has() {
	if grep -qxF -- "$2" <<<"$3"; then
		echo "ok: $1 offers $2"
	else
		problem "$1 does not offer '$2'; it offers: $(tr '\n' ' ' <<<"$3")"
	fi
}

# The command paths, from the binary: "" (vaccelctl itself), "limits",
# "limits get", ..., "cdi hook create".
paths=("")
for ((p = 0; p < ${#paths[@]}; p++)); do
	# shellcheck disable=SC2086 # a path is words
	for sub in $(commands_of ${paths[p]}); do
		paths+=("${paths[p]:+${paths[p]} }$sub")
	done
done
echo "commands of $ctl: ${paths[*]:1}"
global=$(options_of "$ctl")

# --- bash ---------------------------------------------------------------
# A bash of its own for the completion: the checks below write COMP_* and
# call the completion function as bash would; bash_completion (when loaded
# first) must change nothing.
bash_checks() {
	completion_function=$1
	local script=$2
	# offered LINE: what the completion offers for LINE, the cursor at its
	# end; COMP_WORDS split as bash splits them (at blanks, and at '=' and
	# ':', each run of which is a word of its own), sorted.
	offered() {
		local line=$1 word
		local -a blanks pieces=()
		read -ra blanks <<<"$line"
		for word in "${blanks[@]}"; do
			while [ -n "$word" ]; do
				[[ $word =~ ^([=:]+|[^=:]+)(.*)$ ]]
				pieces+=("${BASH_REMATCH[1]}")
				word=${BASH_REMATCH[2]}
			done
		done
		[[ $line == *' ' ]] && pieces+=("")
		COMP_WORDS=("${pieces[@]}")
		COMP_CWORD=$((${#pieces[@]} - 1))
		COMP_LINE=$line
		COMP_POINT=${#line}
		COMPREPLY=()
		set +eu
		"$completion_function" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		set -eu
		[ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u
	}
	set +eu
	# shellcheck disable=SC1090
	source "$script"
	set -eu
	complete -p "${completion_function#_}" | grep -q -- "-F $completion_function " ||
		problem "$script does not register $completion_function for ${completion_function#_}"
}

vaccelctl_bash() {
	bash_checks _vaccelctl "$completions/vaccelctl.bash"
	local path prefix
	for path in "${paths[@]}"; do
		local subs
		# shellcheck disable=SC2086 # a path is words
		subs=$(commands_of $path)
		if [ -n "$subs" ]; then
			same "bash: vaccelctl ${path:+$path }<TAB>" "$subs" "$(offered "$ctl ${path:+$path }")"
			for prefix in "-v" "-q --socket /tmp/s" "--socket=/tmp/s -v"; do
				same "bash: vaccelctl $prefix ${path:+$path }<TAB>" "$subs" "$(offered "$ctl $prefix ${path:+$path }")"
			done
		fi
		# shellcheck disable=SC2086
		same "bash: vaccelctl ${path:+$path }-<TAB> (its options and the global ones)" \
			"$(sort -u <(options_of "$ctl" $path) <(echo "$global"))" "$(offered "$ctl ${path:+$path }-")"
	done
	same "bash: vaccelctl run -<TAB> against vaccelctl run --help" \
		"$(sort -u <(options_of "$ctl" run) <(echo "$global"))" "$(offered "$ctl -v run m.tosa -i x=a.npy -")"

	# Values.
	mkdir -p "$scratch/files/out"
	touch "$scratch/files/"{a.tosa,b.onnx,c.npy,d.txt}
	(
		cd "$scratch/files"
		same "bash: vaccelctl run <TAB> (models, directories)" $'a.tosa\nb.onnx\nout' "$(offered "$ctl run ")"
		same "bash: vaccelctl run a.tosa -i <TAB>" $'c.npy\nout' "$(offered "$ctl run a.tosa -i ")"
		same "bash: vaccelctl run a.tosa -i x=<TAB>" $'c.npy\nout' "$(offered "$ctl run a.tosa -i x=")"
		same "bash: vaccelctl run a.tosa --variable=h=<TAB>" $'c.npy\nout' "$(offered "$ctl run a.tosa --variable=h=")"
		same "bash: vaccelctl run a.tosa -o <TAB>" "out" "$(offered "$ctl run a.tosa -o ")"
		same "bash: vaccelctl run a.tosa --output-dir=<TAB>" "out" "$(offered "$ctl run a.tosa --output-dir=")"
		same "bash: vaccelctl run a.tosa -n 3 <TAB> (the model given: run's options)" \
			"$(options_of "$ctl" run | grep -vx -e -h -e --help)" "$(offered "$ctl run a.tosa -n 3 ")"
	)
	same "bash: vaccelctl limits set --priority <TAB>" $'batch\nlatency' "$(offered "$ctl limits set --priority ")"
	local devices listed kind
	devices=$(offered "$ctl run m.tosa -d ")
	has "bash: vaccelctl run -d <TAB>" auto "$devices"
	has "bash: vaccelctl run -d <TAB>" cpu "$devices"
	# What `devices -L` lists, when it answers within the completion's second.
	if listed=$(timeout 1 "$ctl" -q devices -L 2>/dev/null </dev/null); then
		for kind in $(awk '$1 ~ /^\[[0-9]+\]$/ { print $2 }' <<<"$listed"); do
			has "bash: vaccelctl run -d <TAB>" "$kind" "$devices"
			has "bash: vaccelctl run -d ${kind%%:*}:<TAB> (bash replaces what follows ':')" \
				"${kind#*:}" "$(offered "$ctl run m.tosa -d ${kind%%:*}:")"
		done
	else
		echo "note: '$ctl -q devices -L' did not answer within a second here; only auto and cpu checked"
	fi
}

vacceld_bash() {
	bash_checks _vacceld "$completions/vacceld.bash"
	same "bash: vacceld -<TAB> against vacceld --help" "$(options_of "$daemon")" "$(offered "$daemon -")"
	same "bash: vacceld --log-level <TAB>" $'debug\nerror\ninfo\ntrace\nwarn' "$(offered "$daemon --log-level ")"
	same "bash: vacceld --devices cpu,<TAB>" $'cpu,cpu\ncpu,cuda\ncpu,vulkan' "$(offered "$daemon --devices cpu,")"
}

# Each check in a bash of its own (a subshell), as when it is loaded by
# hand; then with bash-completion loaded, as it is when installed.
run_bash() {
	local problems_before=$problems status=0
	( vaccelctl_bash; [ "$problems" -eq "$problems_before" ] ) || status=1
	if [ -n "$daemon" ]; then
		( vacceld_bash; [ "$problems" -eq "$problems_before" ] ) || status=1
	fi
	return $status
}
run_bash || problems=$((problems + 1))
bash_completion=/usr/share/bash-completion/bash_completion
if [ -r "$bash_completion" ]; then
	echo "-- again with $bash_completion loaded"
	(
		set +eu
		# shellcheck disable=SC1090
		source "$bash_completion"
		set -eu
		run_bash
	) || problems=$((problems + 1))
else
	echo "note: no $bash_completion here (make deps installs bash-completion); checked without it"
fi

# --- zsh ----------------------------------------------------------------
# long_options PROGRAM ARGS...: the long options of every command.
if ! command -v zsh >/dev/null; then
	problem "zsh is not installed, so _vaccelctl and _vacceld are not checked (make deps installs it)"
else
	for file in _vaccelctl _vacceld; do
		if zsh -n "$completions/$file"; then echo "ok: zsh -n $file"; else problem "zsh -n $file"; fi
	done
	for path in "${paths[@]:1}"; do
		grep -q "'${path##* }:" "$completions/_vaccelctl" ||
			problem "zsh: _vaccelctl does not describe the command '$path' (as '${path##* }:...')"
	done
	for path in "${paths[@]}"; do
		# shellcheck disable=SC2086
		for option in $(options_of "$ctl" $path | grep -- '^--'); do
			grep -qE -- "(^|[^-a-z])$option([^-a-z]|$)" "$completions/_vaccelctl" ||
				problem "zsh: _vaccelctl does not name $option (vaccelctl $path --help)"
		done
	done
	if [ -n "$daemon" ]; then
		for option in $(options_of "$daemon" | grep -- '^--'); do
			grep -qE -- "(^|[^-a-z])$option([^-a-z]|$)" "$completions/_vacceld" ||
				problem "zsh: _vacceld does not name $option (vacceld --help)"
		done
	fi
	echo "ok: zsh files name every command and long option they were checked for (failures above, if any)"
fi

# --- the man page -------------------------------------------------------
# The EXAMPLES section, its roff undone enough to read command lines.
examples=$(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$man_page" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g')
[ -n "$examples" ] || problem "$man_page has no EXAMPLES section"
for path in "${paths[@]:1}"; do
	if grep -qE -- "(^|[ |])vaccelctl( -[^ ]+( [^- ][^ ]*)?)* $path( |$)" <<<"$examples"; then
		echo "ok: man: an example of vaccelctl $path"
	else
		problem "man: $man_page has no example of 'vaccelctl $path' in EXAMPLES"
	fi
done
if command -v groff >/dev/null; then
	for page in "$man_page" "$root/debian/man/vacceld.8"; do
		warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
		if [ -z "$warnings" ]; then echo "ok: groff -ww: $(basename "$page")"; else problem "groff -ww $(basename "$page"): $warnings"; fi
	done
fi

if [ "$problems" -ne 0 ]; then
	echo "FAIL: the completions or the man page differ from $ctl (above)" >&2
	exit 1
fi
echo "PASS: the completions and the man page know every command of $ctl"
