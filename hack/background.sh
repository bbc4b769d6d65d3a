#!/usr/bin/env bash
# make test's tests that mostly wait on the clock run in the background,
# side by side with the ones that mostly compute.
#
#   hack/background.sh start DIR NAME [--after OTHER[,OTHER]] COMMAND...
#       runs COMMAND in the background (once each OTHER has ended, with
#       --after),
#       each output line prefixed with [NAME] and kept in DIR/NAME.log;
#       its exit code goes to DIR/NAME.rc
#   hack/background.sh wait DIR NAME...           waits for each NAME's
#       exit code, prints it, and fails if any is not 0; for a failed one,
#       it first prints again the lines of its output that say why (its
#       failures and their messages, and the last lines before the end),
#       since they scrolled by among the other tests' lines long before
#       the end of the log, which is all a CI report may show
set -uo pipefail

usage() { echo "usage: $0 start DIR NAME [--after OTHER[,OTHER]] COMMAND... | wait DIR NAME..." >&2; exit 2; }

# await waits until NAME has written its exit code to DIR.
await() { while [ ! -s "$1/$2.rc" ]; do sleep 5; done; }

# A make test interrupted leaves its waiters (--after) behind; the next one
# empties DIR, and its runs get a new DIR/run token. A waiter whose token
# is gone gives up, instead of running beside the next run's own.
token() { cat "$1/run" 2>/dev/null; }
await_run() {
	local mine
	mine=$(token "$1")
	while [ ! -s "$1/$2.rc" ]; do
		[[ $(token "$1") == "$mine" ]] || exit 0
		sleep 5
	done
	[[ $(token "$1") == "$mine" ]] || exit 0
}

# why prints what says why a background test failed: Go's failure lines
# and the messages logged under them, its progress lines, and the last
# lines of its output.
why() {
	[[ -s $1 ]] || return 0
	echo "==> why: its failures and progress, then its last lines ($1)"
	grep -E -e '--- FAIL|^\[[a-z-]+\] +[a-z_]+_test\.go:[0-9]+:|^\[[a-z-]+\] [0-9]{2}:[0-9]{2}:[0-9]{2} |panic:' "$1" | tail -n 60
	echo "==> ..."
	tail -n 15 "$1"
}

# failures prints Go's failure lines of a background test's log, the last
# of them.
failures() {
	grep -E -e '--- FAIL|^\[[a-z-]+\] +[a-z_]+_test\.go:[0-9]+:|panic:' "$1" | tail -n 12
}

case "${1:-}" in
start)
	(($# >= 4)) || usage
	dir=$2 name=$3 after=
	shift 3
	if [[ $1 == --after ]]; then
		(($# >= 3)) || usage
		after=$2
		shift 2
	fi
	mkdir -p "$dir"
	[[ -s $dir/run ]] || echo "$$-$RANDOM-$(date +%s%N)" >"$dir/run"
	rm -f "$dir/$name.rc"
	rm -f "$dir/$name.log" "$dir/$name.status"
	# The exit code is published once the whole output is in the log.
	(
		{
			for other in ${after//,/ }; do await_run "$dir" "$other"; done
			"$@" 2>&1
			echo $? >"$dir/$name.status"
		} | sed -u "s/^/[$name] /" | tee -a "$dir/$name.log"
		[[ ! -e $dir/$name.status ]] || mv "$dir/$name.status" "$dir/$name.rc"
	) &
	;;
wait)
	(($# >= 3)) || usage
	dir=$2
	shift 2
	failed=()
	for name in "$@"; do
		await "$dir" "$name"
		rc=$(cat "$dir/$name.rc")
		((rc == 0)) || why "$dir/$name.log"
		echo "==> [$name] exit $rc"
		((rc == 0)) || failed+=("$name")
	done
	# A CI report shows the end of the log: the failed tests' own
	# failure lines go last, after the other background tests' output.
	for name in "${failed[@]}"; do
		echo "==> [$name] FAILED; its failure lines:"
		failures "$dir/$name.log"
	done
	((${#failed[@]} == 0))
	;;
*) usage ;;
esac
