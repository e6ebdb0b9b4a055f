#!/usr/bin/env bash
# Prints, for a failed Maven suite, the stack traces of its failing tests from the surefire and
# failsafe reports under the given directory (default: java/), so that a CI log (which shows
# only Maven's one-line summaries) carries each failure's causes. Output is bounded per test.
# Usage: print-jvm-failures.sh DIR [MARKER]: only reports newer than the file MARKER (reports a
# suite left from an earlier run are not its failures).
set -uo pipefail
root=${1:-java}
marker=${2:-}
newer=()
if [ -n "$marker" ] && [ -e "$marker" ]; then
  newer=(-newer "$marker")
fi
found=0
while IFS= read -r report; do
  if grep -q -E '<<< (FAILURE|ERROR)!' "$report"; then
    found=1
    echo "----- $report"
    # The failing test's header and trace, "Caused by" lines kept, frames thinned.
    awk '/<<< (FAILURE|ERROR)!/ {on=1; n=0}
         on && (/^[^\t ]/ || /Caused by/ || n < 25) {print; n++}
         on && n > 120 {print "\t... (cut)"; on=0}' "$report"
  fi
done < <(find "$root" -path '*-reports/*.txt' "${newer[@]}" 2>/dev/null | sort)
[ "$found" -eq 1 ] || echo "(no failing test reports under $root)"
