#!/usr/bin/env bash
# Reports agentd's binary size by dependency: the stripped release size,
# then the bytes of code and read-only data each module contributes
# (text and rodata symbol sizes from go tool nm on an unstripped build,
# grouped by module path; data and bss symbols are left out, since a
# zeroed array, 32 MiB of it in crypto/internal/fips140/drbg, takes no
# room in the file). The shares leave out pclntab and DWARF, so they
# rank the modules rather than add up to the file.
#
# The build is the release's: CGO_ENABLED=0, -trimpath, and the
# Makefile's GOTAGS (grpcnotrace: see there). For comparison it also
# reports the binary a plain `go install` (no tags) gives. The limit CI
# holds is cmd/agentd's TestReleaseBinary (maxReleaseMiB).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${GOTAGS:=$(sed -n 's/^GOTAGS *:= *//p' Makefile)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mib() { echo "$(stat -c %s "$1") / 1048576" | bc -l; }
CGO_ENABLED=0 go build -tags "$GOTAGS" -trimpath -ldflags "-s -w" -o "$tmp/agentd.stripped" ./cmd/agentd
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/agentd.notags" ./cmd/agentd
CGO_ENABLED=0 go build -tags "$GOTAGS" -trimpath -o "$tmp/agentd" ./cmd/agentd
printf 'stripped binary (-tags %s): %.1f MiB\n' "$GOTAGS" "$(mib "$tmp/agentd.stripped")"
printf 'stripped binary without tags (plain go install): %.1f MiB\n\n' "$(mib "$tmp/agentd.notags")"
# Modules as go version -m lists them; a symbol belongs to the longest
# module path that prefixes it, else to the standard library or runtime.
go version -m "$tmp/agentd" | awk '$1=="dep"||$1=="mod"{print $2}' | sort -r > "$tmp/mods"
go tool nm -size "$tmp/agentd" | awk -v mods="$tmp/mods" '
  BEGIN { while ((getline m < mods) > 0) list[++n] = m }
  NF >= 4 && ($3 == "T" || $3 == "t" || $3 == "R" || $3 == "r") {
    size = $2; sym = $4
    # A type descriptor, its equality function or an itab counts for
    # the package of its (first) type.
    sub(/^(type:|go:itab\.)(\.eq\.)?[*\[\]0-9]*/, "", sym)
    owner = "std"
    for (i = 1; i <= n; i++) if (index(sym, list[i]) == 1) { owner = list[i]; break }
    if (owner == "std" && ($4 ~ /^(type:|go:|runtime\.)/)) owner = "runtime, types, func tables"
    total[owner] += size; all += size
  }
  END {
    for (o in total) printf "%8.2f MiB %5.1f%%  %s\n", total[o]/1048576, 100*total[o]/all, o
    printf "%8.2f MiB 100.0%%  (all text and rodata symbols)\n", all/1048576
  }' | sort -rn | head -31
