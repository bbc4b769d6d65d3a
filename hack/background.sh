#!/usr/bin/env bash
# make test's tests that mostly wait on the clock run in the background,
# side by side with the ones that mostly compute.
#
#   hack/background.sh start DIR NAME [--after OTHER] COMMAND...  runs
#       COMMAND in the background (once OTHER has ended, with --after),
#       each output line prefixed with [NAME]; its exit code goes to
#       DIR/NAME.rc
#   hack/background.sh wait DIR NAME...           waits for each NAME's
#       exit code, prints it, and fails if any is not 0
set -uo pipefail

usage() { echo "usage: $0 start DIR NAME [--after OTHER] COMMAND... | wait DIR NAME..." >&2; exit 2; }

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
	{
		[[ -z $after ]] || await_run "$dir" "$after"
		"$@" 2>&1
		echo $? >"$dir/$name.rc"
	} | sed -u "s/^/[$name] /" &
	;;
wait)
	(($# >= 3)) || usage
	dir=$2
	shift 2
	failed=0
	for name in "$@"; do
		await "$dir" "$name"
		rc=$(cat "$dir/$name.rc")
		echo "==> [$name] exit $rc"
		((rc == 0)) || failed=1
	done
	exit $failed
	;;
*) usage ;;
esac
