#!/usr/bin/env bash
# Runs every test of ./reliability, the long ones too (-soak: 500 clients
# for 60 s against the real binary, on top of the CI subset), and rewrites
# docs/reliability.md with the figures of this run, skipped tests and
# their reasons included. The report is written even when a test fails
# (its row then says FAIL), and the script exits non-zero.
#
#   ./scripts/soak.sh                                   # what `make soak` runs
#   ./scripts/soak.sh -soak.clients 100 -soak.duration 10s   # a shorter soak
#   RACE=1 ./scripts/soak.sh                            # with the race detector (slower figures)
#
# Extra arguments are passed to the tests (after -args).
set -euo pipefail
cd "$(dirname "$0")/.."
race=()
if [ "${RACE:-}" = "1" ]; then
  race=(-race)
fi
go test ${race[@]+"${race[@]}"} ./reliability -run . -count=1 -v -timeout 30m \
  -args -soak -report "$PWD/docs/reliability.md" "$@"
