# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# nvme-cli's autoconnect path without udevd and systemd (sourced, not run,
# after lib/frame.sh). The test guest has neither: its PID 1 is
# tools/vm/init. So what they would do is done here, from the files the
# installed nvme-cli package ships, read when the test runs (nothing of
# them is copied here):
#
#   uev_start FILE      capture kernel uevents ("udevadm monitor --kernel
#                       --property") into FILE in the background
#   uev_sync DEV FILE   synthetic change uevents on /sys/class/nvme/DEV
#                       (SYNTH_UUID=$UEV_SYNC_UUID) until the capture
#                       FILE shows one: the monitor is listening
#   uev_find FILE KEY=VALUE...  print the properties (KEY=VALUE lines) of
#                       the first captured uevent that has all of them
#   uev_stop            end the capture
#   pkg_file PKG REGEX  the installed file of package PKG whose path
#                       matches REGEX (dpkg -L), exactly one
#   udev_eval RULES PROPS  what udevd would do with the uevent PROPS (a
#                       file of KEY=VALUE lines) by the rules file RULES:
#                       print its RUN commands, one a line, substituted
#   systemctl_run CMD   run the systemctl command CMD (one of those RUN
#                       lines) as systemd would: for "start UNIT", the
#                       unit's Environment= and ExecStart= lines with its
#                       specifiers and variables expanded, in the
#                       foreground; prints what it runs and its output
#
# Only what the rules and units of nvme-cli use is emulated; anything else
# in the files they would need (another udev key or substitution, another
# systemctl verb, another specifier) makes udev_eval or systemctl_run fail
# with a message, so a new nvme-cli release cannot be passed without
# being looked at. Needs lib/env.sh.

# ---------------------------------------------------------------- uevents

UEV_PID=

uev_start() {
	stdbuf -oL udevadm monitor --kernel --property >"$1" 2>&1 &
	UEV_PID=$!
}

uev_stop() {
	[[ -n $UEV_PID ]] || return 0
	kill "$UEV_PID" 2>/dev/null
	wait "$UEV_PID" 2>/dev/null
	UEV_PID=
}

# uev_find FILE KEY=VALUE...: blocks are separated by blank lines; the
# first line of a block is udevadm's summary, the rest KEY=VALUE.
uev_find() {
	local file=$1
	shift
	awk -v want="$*" '
		BEGIN { RS = ""; FS = "\n"; n = split(want, w, " ") }
		{
			hit = 0
			for (i = 1; i <= n; i++)
				for (j = 2; j <= NF; j++)
					if ($j == w[i]) { hit++; break }
			if (hit == n) {
				for (j = 2; j <= NF; j++) print $j
				found = 1
				exit
			}
		}
		END { exit !found }' "$file"
}

# uev_sync DEV FILE: write a change event with a fresh UUID
# (UEV_SYNC_UUID) into DEV's uevent file until the capture in FILE shows
# one: events sent before the monitor has its socket are lost.
UEV_SYNC_UUID=
uev_sync() {
	local i
	for ((i = 0; i < 30; i++)); do
		UEV_SYNC_UUID=$(</proc/sys/kernel/random/uuid)
		echo "change $UEV_SYNC_UUID" >"/sys/class/nvme/$1/uevent" ||
			return 1
		wait_for 1 uev_find "$2" "SYNTH_UUID=$UEV_SYNC_UUID" \
			>/dev/null && return 0
	done
	echo "the uevent monitor saw none of 30 synthetic events on $1" \
		"(monitor $(pid_gone "$UEV_PID" && echo exited ||
			echo running)); captured:"
	cat "$2"
	return 1
}

# ---------------------------------------------------------------- package

pkg_file() {
	local f n
	f=$(dpkg -L "$1" 2>/dev/null | grep -E -- "$2")
	n=$(grep -c . <<<"$f")
	if ((n != 1)) || [[ ! -f $f ]]; then
		echo "package $1: $n files match $2${f:+: $f}"
		return 1
	fi
	echo "$f"
}

# ---------------------------------------------------------------- udev

# The rules as logical lines: comments and blank lines out, lines ending
# in a backslash joined with the next.
udev_lines() {
	awk '
		/^[ \t]*#/ || /^[ \t]*$/ { if (buf == "") next }
		{
			if (sub(/\\[ \t]*$/, "")) { buf = buf $0; next }
			print buf $0
			buf = ""
		}' "$1"
}

# udev_value KEY: the value a match key compares (ACTION, SUBSYSTEM,
# KERNEL, DEVPATH, ENV{X}, ATTR{X}); uses udev_eval's _ue_env.
udev_value() {
	local key=$1 a
	case $key in
	ACTION | SUBSYSTEM | DEVPATH) echo "${_ue_env[$key]:-}" ;;
	KERNEL) echo "${_ue_env[DEVPATH]##*/}" ;;
	ENV\{*\})
		a=${key#ENV\{}
		echo "${_ue_env[${a%\}}]:-}"
		;;
	ATTR\{*\})
		a=${key#ATTR\{}
		a=$(cat "/sys${_ue_env[DEVPATH]}/${a%\}}" 2>/dev/null)
		# udev strips trailing white space of attributes it matches
		echo "${a%"${a##*[![:space:]]}"}"
		;;
	*)
		echo "udev (emulated): no match key $key" >&2
		return 1
		;;
	esac
}

# udev_glob VALUE PATTERN: udev's match: a shell glob, "|" separates
# alternatives.
udev_glob() {
	local v=$1 p alts
	IFS='|' read -r -a alts <<<"$2"
	((${#alts[@]})) || alts=("")
	for p in "${alts[@]}"; do
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $v == $p ]] && return 0
	done
	return 1
}

# udev_subst STRING: udev's $kernel/%k, $devpath/%p, $env{X}/%E{X},
# $attr{X}/%s{X}, $$ and %%.
udev_subst() {
	local s=$1 out='' re v
	re='^([^$%]*)[$%](kernel|k|devpath|p|env\{([^}]*)\}|E\{([^}]*)\}|attr\{([^}]*)\}|s\{([^}]*)\}|\$|%)(.*)$'
	while [[ $s == *[\$%]* ]]; do
		if ! [[ $s =~ $re ]]; then
			echo "udev (emulated): cannot substitute in: $s" >&2
			return 1
		fi
		out+=${BASH_REMATCH[1]}
		case ${BASH_REMATCH[2]} in
		kernel | k) v=${_ue_env[DEVPATH]##*/} ;;
		devpath | p) v=${_ue_env[DEVPATH]} ;;
		env* | E*) v=${_ue_env[${BASH_REMATCH[3]}${BASH_REMATCH[4]}]:-} ;;
		attr* | s*) v=$(udev_value "ATTR{${BASH_REMATCH[5]}${BASH_REMATCH[6]}}") ;;
		*) v=${BASH_REMATCH[2]} ;;
		esac
		out+=$v
		s=${BASH_REMATCH[7]}
	done
	echo "$out$s"
}

udev_eval() {
	local rules=$1 props=$2 line rest key op val goto='' ok k v k2
	local re='^[[:space:]]*([A-Z_]+(\{[^}]*\})?)[[:space:]]*(==|!=|\+=|-=|:=|=)[[:space:]]*"(([^"\\]|\\.)*)"[[:space:]]*(,|$)'
	local -a toks runs=()
	local -A _ue_env=()
	while IFS='=' read -r k v; do
		[[ -n $k ]] && _ue_env[$k]=$v
	done <"$props"
	while IFS= read -r line; do
		# the rule's keys: "KEY", "op" and "value", three array items each
		toks=()
		rest=$line
		while [[ -n ${rest//[[:space:]]/} ]]; do
			if ! [[ $rest =~ $re ]]; then
				echo "udev (emulated): cannot parse: $rest" >&2
				return 1
			fi
			val=${BASH_REMATCH[4]}
			toks+=("${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}" "${val//\\\"/\"}")
			rest=${rest:${#BASH_REMATCH[0]}}
		done
		if [[ -n $goto ]]; then
			[[ ${toks[0]} == LABEL && ${toks[2]} == "$goto" ]] && goto=
			continue
		fi
		# udevd evaluates every match of a rule before its assignments
		ok=1
		for ((k = 0; k < ${#toks[@]}; k += 3)); do
			key=${toks[k]} op=${toks[k + 1]} val=${toks[k + 2]}
			[[ $op == "==" || $op == "!=" ]] || continue
			v=$(udev_value "$key") || return 1
			if udev_glob "$v" "$val"; then
				[[ $op == "==" ]] || ok=0
			else
				[[ $op == "!=" ]] || ok=0
			fi
		done
		((ok)) || continue
		for ((k = 0; k < ${#toks[@]}; k += 3)); do
			key=${toks[k]} op=${toks[k + 1]} val=${toks[k + 2]}
			[[ $op == "==" || $op == "!=" ]] && continue
			case $key:$op in
			LABEL:=) ;;
			GOTO:=) goto=$val ;;
			ENV\{*\}:=)
				k2=${key#ENV\{}
				_ue_env[${k2%\}}]=$(udev_subst "$val") || return 1
				;;
			RUN:+=)
				v=$(udev_subst "$val") || return 1
				runs+=("$v")
				;;
			RUN:=)
				v=$(udev_subst "$val") || return 1
				runs=("$v")
				;;
			*)
				echo "udev (emulated): no assignment $key$op" >&2
				return 1
				;;
			esac
		done
	done < <(udev_lines "$rules")
	((${#runs[@]})) && printf '%s\n' "${runs[@]}"
	return 0
}

# ---------------------------------------------------------------- systemd

readonly SD_UNIT_PATH="/etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system /lib/systemd/system /usr/lib/systemd/system"
# what systemd gives a service as PATH
readonly SD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# sd_split STRING: systemd's word splitting (quotes removed, C escapes
# resolved) into SD_WORDS.
sd_split() {
	local s=$1 i c q='' w='' have=0
	SD_WORDS=()
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		if [[ -n $q ]]; then
			if [[ $c == "$q" ]]; then
				q=
				continue
			fi
		elif [[ $c == [[:space:]] ]]; then
			((have)) && SD_WORDS+=("$w")
			w='' have=0
			continue
		elif [[ $c == [\"\'] ]]; then
			q=$c have=1
			continue
		fi
		if [[ $c == \\ ]]; then
			i=$((i + 1))
			c=${s:i:1}
			case $c in
			x)
				printf -v c '%b' "\\x${s:i+1:2}"
				i=$((i + 2))
				;;
			n) c=$'\n' ;;
			t) c=$'\t' ;;
			s) c=' ' ;;
			esac
		fi
		w+=$c have=1
	done
	if [[ -n $q ]]; then
		echo "systemd (emulated): unbalanced quotes: $s" >&2
		return 1
	fi
	((have)) && SD_WORDS+=("$w")
	return 0
}

# sd_spec STRING: unit specifiers (of _sd_name, _sd_inst) expanded.
sd_spec() {
	local s=$1 out='' c
	while [[ $s == *%* ]]; do
		out+=${s%%%*}
		s=${s#*%}
		c=${s:0:1}
		s=${s:1}
		case $c in
		i) out+=$_sd_inst ;;
		I) out+=$(systemd-escape --unescape -- "$_sd_inst") ;;
		n) out+=$_sd_name ;;
		N) out+=${_sd_name%.*} ;;
		p) out+=${_sd_name%%@*} ;;
		%) out+=% ;;
		*)
			echo "systemd (emulated): no specifier %$c" >&2
			return 1
			;;
		esac
	done
	echo "$out$s"
}

# sd_unit_files NAME: the unit file for NAME (or its template) and its
# drop-ins, in the order systemd reads them.
sd_unit_files() {
	local name=$1 tmpl d f main=''
	tmpl=$name
	[[ $name == *@?*.* ]] && tmpl=${name%%@*}@.${name##*.}
	for d in $SD_UNIT_PATH; do
		for f in "$d/$name" "$d/$tmpl"; do
			[[ -f $f && -z $main ]] && main=$f
		done
	done
	[[ -n $main ]] || return 1
	echo "$main"
	for d in $SD_UNIT_PATH; do
		for f in "$d/$tmpl.d"/*.conf "$d/$name.d"/*.conf; do
			[[ -f $f ]] && echo "$f"
		done
	done | awk -F/ '{ print $NF "\t" $0 }' | sort -s -k1,1 | cut -f2-
}

# sd_exec LINE: one ExecStart= line of the unit, run as systemd would.
sd_exec() {
	local line=$1 ign=0 a k rc
	local -a argv=() envs=() words
	while [[ $line == [-@:+!]* ]]; do
		[[ $line == -* ]] && ign=1
		[[ $line == [@:+!]* ]] && {
			echo "systemd (emulated): no ExecStart prefix ${line:0:1}" >&2
			return 1
		}
		line=${line:1}
	done
	line=$(sd_spec "$line") || return 1
	sd_split "$line" || return 1
	for a in "${SD_WORDS[@]}"; do
		if [[ $a =~ ^\$([A-Za-z_][A-Za-z0-9_]*)$ ]]; then
			read -r -a words <<<"${_sd_env[${BASH_REMATCH[1]}]:-}"
			argv+=("${words[@]}")
			continue
		fi
		for k in "${!_sd_env[@]}"; do
			a=${a//"\${$k}"/"${_sd_env[$k]}"}
		done
		argv+=("$a")
	done
	for k in "${!_sd_env[@]}"; do
		envs+=("$k=${_sd_env[$k]}")
	done
	printf 'systemd (emulated): ExecStart:'
	printf ' [%s]' "${argv[@]}"
	echo
	(cd / && env -i PATH="$SD_PATH" "${envs[@]}" \
		timeout 120 "${argv[@]}" </dev/null 2>&1)
	rc=$?
	echo "systemd (emulated): exit status $rc"
	((rc == 0 || ign))
}

# sd_start NAME: "systemctl start NAME" of a service.
sd_start() {
	local _sd_name _sd_inst='' files f line sect='' k v
	local -a execs=()
	local -A _sd_env=()
	_sd_name=$(systemd-escape --mangle -- "$1") || return 1
	[[ $_sd_name == *@?*.service ]] && {
		_sd_inst=${_sd_name#*@}
		_sd_inst=${_sd_inst%.service}
	}
	echo "systemd (emulated): start $_sd_name"
	files=$(sd_unit_files "$_sd_name") || {
		echo "systemd (emulated): no unit file for $_sd_name"
		return 1
	}
	while IFS= read -r f; do
		echo "systemd (emulated): unit file $f"
		while IFS= read -r line; do
			[[ $line =~ ^[[:space:]]*([#\;]|$) ]] && continue
			if [[ $line =~ ^\[(.*)\]$ ]]; then
				sect=${BASH_REMATCH[1]}
				continue
			fi
			[[ $sect == Service ]] || continue
			k=${line%%=*}
			v=${line#*=}
			case $k in
			Environment)
				sd_split "$v" || return 1
				for v in "${SD_WORDS[@]}"; do
					v=$(sd_spec "$v") || return 1
					_sd_env[${v%%=*}]=${v#*=}
				done
				;;
			ExecStart)
				if [[ -z $v ]]; then
					execs=()
				else
					execs+=("$v")
				fi
				;;
			Type) [[ $v == simple || $v == oneshot || $v == exec ]] || {
				echo "systemd (emulated): no Type=$v"
				return 1
			} ;;
			*)
				echo "systemd (emulated): no $k= in [Service]"
				return 1
				;;
			esac
		done <"$f"
	done <<<"$files"
	((${#execs[@]})) || {
		echo "systemd (emulated): $_sd_name has no ExecStart="
		return 1
	}
	for line in "${execs[@]}"; do
		sd_exec "$line" || return 1
	done
}

# systemctl_run CMDLINE: a RUN command of udev_eval, "systemctl [--no-block]
# start UNIT...". The unit runs in the foreground (--no-block only matters
# to udevd, which would not wait for it).
systemctl_run() {
	local -a argv
	local a verb=''
	if [[ $1 == *[\"\']* ]]; then
		echo "udev (emulated): no quotes in RUN: $1"
		return 1
	fi
	read -r -a argv <<<"$1"
	[[ ${argv[0]##*/} == systemctl ]] || {
		echo "udev (emulated): RUN is not systemctl: $1"
		return 1
	}
	for a in "${argv[@]:1}"; do
		case $a in
		--no-block | --quiet | -q) ;;
		-*)
			echo "systemd (emulated): no systemctl option $a"
			return 1
			;;
		*)
			if [[ -z $verb ]]; then
				verb=$a
				[[ $verb == start ]] || {
					echo "systemd (emulated): no systemctl $verb"
					return 1
				}
				continue
			fi
			sd_start "$a" || return 1
			;;
		esac
	done
	[[ -n $verb ]]
}
