#!/bin/sh
# Run the SimGrid oracle on every hand-derived fluid case and compare each flow's
# finish time with the case's "expected" value (relative tolerance 1e-12).
# Usage: tools/sgoracle/check_cases.sh [CASES_DIR]   (default /work/shared/docs/fluid-cases)
# Exit status: 0 when all match, 1 on any mismatch or oracle failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cases=${1:-/work/shared/docs/fluid-cases}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
n=0
for c in "$cases"/*.json; do
	[ -e "$c" ] || { echo "no cases in $cases"; exit 1; }
	n=$((n + 1))
	name=$(basename "$c" .json)
	if ! "$py" "$here/sgnetsim.py" "$c" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		echo "$name: oracle failed:"; cat "$tmp/$name.err"; status=1; continue
	fi
	"$py" "$here/compare.py" --rtol 1e-12 --label "$name" "$c" "$tmp/$name.out" || status=1
done
if [ $status -eq 0 ]; then echo "check_cases: all $n cases match SimGrid to 1e-12 relative"; else echo "check_cases: FAILED"; fi
exit $status
