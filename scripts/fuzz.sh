#!/usr/bin/env bash
# Runs every native fuzz target in the module for the given time each
# (default 3s), one at a time: `go test -fuzz` accepts one target per run.
set -euo pipefail
t=${1:-3s}
cd "$(dirname "$0")/.."
fail=0
while IFS= read -r pkg; do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target ($t)"
    ok=0
    for attempt in 1 2; do
      if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" "$pkg" >/tmp/fuzz.$$.log 2>&1; then ok=1; break; fi
      # On a loaded machine the fuzzing engine can time out its own
      # workers ("context deadline exceeded") without any failing input:
      # that is not a finding, so try once more. A real finding writes
      # its input under testdata/fuzz and is never retried.
      grep -q 'Failing input written' /tmp/fuzz.$$.log && break
      grep -q 'context deadline exceeded' /tmp/fuzz.$$.log || break
      echo "  (engine timeout without a failing input; retrying)"
    done
    if [ $ok = 0 ]; then cat /tmp/fuzz.$$.log; fail=1; fi
  done
done < <(go list ./...)
rm -f /tmp/fuzz.$$.log
exit $fail
