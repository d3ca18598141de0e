#!/usr/bin/env bash
# Makes sure the tests have a PostgreSQL server (internal/store/postgres/pgtest).
#
#   eval "$(./scripts/postgres.sh)"      # what `make test` does
#   ./scripts/postgres.sh stop           # stops and removes what it started
#
# Nothing to do when AGENTD_TEST_POSTGRES_URL is set or a server on
# 127.0.0.1:5432 lets user postgres in without a password (the tests' default).
# Otherwise it installs Debian's postgresql package if initdb is missing
# (apt-get, with sudo when not root), creates a throwaway cluster in a
# temporary directory (trust authentication, loopback only, a free port,
# fsync off: nothing in it needs to survive), starts it, and prints on stdout
# the lines to eval:
#
#   export AGENTD_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable'
#   export AGENTD_PG_CLUSTER='/tmp/agentd-pg.XXXXXX'
#
# Everything else goes to stderr. AGENTD_PG_FORCE_LOCAL=1 skips the
# reachability checks and always creates a cluster (to test this script).
set -euo pipefail

default_url='postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable'
dir=''   # the cluster start creates
ready=0 # set once it is up: until then, exiting removes it

log() { echo "postgres.sh: $*" >&2; }

# bindir prints the directory of the newest installed initdb and pg_ctl.
bindir() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return 0 # not a bare return: in the EXIT trap that returns exit's status
  fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1) || true
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then
    echo "$d"
  fi
}

# as_owner runs a command as the cluster's owner: initdb and postgres refuse
# to run as root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$owner" -- "$@"
  else
    "$@"
  fi
}

# usable reports whether the default server answers and lets postgres in.
usable() {
  if command -v psql >/dev/null 2>&1; then
    PGCONNECT_TIMEOUT=3 psql "$default_url" -w -Atqc 'SELECT 1' >/dev/null 2>&1
  else
    # No client to try a login with: an open port is the best evidence.
    (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null
  fi
}

# free_port prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

install_postgres() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      log "initdb is missing and there is no sudo to install Debian's postgresql package; install it, or set AGENTD_TEST_POSTGRES_URL"
      exit 1
    fi
    sudo=(sudo -n) # never prompt: a CI job would hang
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    log "initdb is missing and this is not a Debian system (no apt-get); install PostgreSQL, or set AGENTD_TEST_POSTGRES_URL"
    exit 1
  fi
  log "installing Debian's postgresql package"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >&2
}

stop() {
  local dir=${AGENTD_PG_CLUSTER:-}
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    return 0
  fi
  local bin
  bin=$(bindir)
  owner=$(stat -c %U "$dir")
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
  fi
  rm -rf "$dir"
  log "stopped and removed $dir"
}

start() {
  if [ "${AGENTD_PG_FORCE_LOCAL:-}" != 1 ]; then
    if [ -n "${AGENTD_TEST_POSTGRES_URL:-}" ]; then
      log "AGENTD_TEST_POSTGRES_URL is set; using it"
      return 0
    fi
    if usable; then
      log "a server on 127.0.0.1:5432 accepts user postgres; the tests use it"
      return 0
    fi
  fi

  local bin
  bin=$(bindir)
  if [ -z "$bin" ]; then
    install_postgres
    bin=$(bindir)
    if [ -z "$bin" ]; then
      log "installed postgresql but found no initdb under /usr/lib/postgresql/*/bin"
      exit 1
    fi
  fi

  owner=$(id -un)
  if [ "$(id -u)" = 0 ]; then
    # The Debian package creates the postgres user; without it, nobody.
    owner=postgres
    id -u postgres >/dev/null 2>&1 || owner=nobody
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/agentd-pg.XXXXXX")
  # Whatever fails from here leaves nothing behind.
  trap 'if [ "$ready" != 1 ]; then AGENTD_PG_CLUSTER="$dir" stop; fi' EXIT
  chmod 0755 "$dir"
  if [ "$(id -u)" = 0 ]; then chown "$owner" "$dir"; fi

  log "creating a throwaway cluster in $dir with $bin/initdb (owner $owner)"
  if ! as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    exit 1
  fi

  local port started=0
  for _ in 1 2 3; do # a port found free may be taken before postgres binds it
    port=$(free_port)
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >&2; then
      started=1
      break
    fi
  done
  if [ "$started" != 1 ]; then
    cat "$dir/server.log" >&2 || true
    exit 1
  fi
  ready=1
  log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') listening on 127.0.0.1:$port"
  echo "export AGENTD_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
  echo "export AGENTD_PG_CLUSTER='$dir'"
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
*)
  echo "usage: $0 [start|stop]" >&2
  exit 2
  ;;
esac
