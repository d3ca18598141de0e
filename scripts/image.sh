#!/usr/bin/env bash
# Builds agentd's container image (Dockerfile) and proves it runs:
#
#   scripts/image.sh build    # the image $IMAGE:$VERSION, with docker or podman
#   scripts/image.sh check    # build, then run it and check it (make test)
#
# check starts the container with the image's own config, waits for
# /readyz, checks that /api needs the key and takes it, runs the image's
# HEALTHCHECK command inside it, and stops it with SIGTERM, which must end
# it with status 0. Under CI (AGENTD_INTEROP=1) a missing container tool
# is installed (Debian's podman and runc) and any failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-build}
: "${VERSION:=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.1.0-dev)}"
: "${COMMIT:=$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
: "${IMAGE:=ghcr.io/agentd/agentd}"
: "${GO:=go}"
# The build tags of every binary agentd ships: the Makefile's GOTAGS.
: "${GOTAGS:=$(sed -n 's/^GOTAGS *:= *//p' Makefile)}"
LDFLAGS="-s -w -buildid= -X github.com/agentd/agentd/internal/buildinfo.version=$VERSION -X github.com/agentd/agentd/internal/buildinfo.commit=$COMMIT"

tool=""
for t in docker podman; do
	if command -v "$t" >/dev/null 2>&1 && "$t" info >/dev/null 2>&1; then tool=$t; break; fi
done
if [ -z "$tool" ]; then
	if [ "${AGENTD_INTEROP:-}" = 1 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc >/dev/null
		tool=podman
	else
		echo "image.sh: no docker or podman that answers here; install one (Debian: apt-get install podman runc)" >&2
		exit 1
	fi
fi

ctx=bin/image
rm -rf "$ctx" && mkdir -p "$ctx/home"
CGO_ENABLED=0 GOOS=linux $GO build -tags "$GOTAGS" -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$ctx/agentd" ./cmd/agentd
cp /etc/ssl/certs/ca-certificates.crt deploy/image/config.toml "$ctx/"
fmt=()
[ "$tool" = podman ] && fmt=(--format docker) # keeps HEALTHCHECK (OCI has none)
"$tool" build -q "${fmt[@]}" -f Dockerfile --build-arg VERSION="$VERSION" --build-arg COMMIT="$COMMIT" -t "$IMAGE:$VERSION" "$ctx" >/dev/null
echo "image.sh: built $IMAGE:$VERSION with $tool"
[ "$mode" = check ] || exit 0

# Run it as a user would: the image's own config (0.0.0.0:4200, an API
# key), published on a free loopback port. The ulimits are ones a nested
# runtime may set (it may not raise them); runc where present, since
# crun refuses hybrid cgroup hierarchies like this machine's.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
key="image-check-$RANDOM$RANDOM"
name="agentd-image-check-$$"
run=("$tool")
[ "$tool" = podman ] && command -v runc >/dev/null 2>&1 && run+=(--runtime runc)
health=()
[ "$tool" = podman ] && health=(--health-interval disable) # no systemd timer here; the check runs it itself
cleanup() { "${run[@]}" rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
fail() {
	echo "image.sh: $*" >&2
	"${run[@]}" logs "$name" >&2 2>&1 || true
	exit 1
}
"${run[@]}" run -d --name "$name" "${health[@]}" -p "127.0.0.1:$port:4200" --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
	-e AGENTD_API_KEY="$key" "$IMAGE:$VERSION" >/dev/null
for _ in $(seq 1 50); do
	if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
	sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/readyz" | grep -q '"ready"' || fail "not ready on 127.0.0.1:$port"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/agents")
[ "$code" = 401 ] || fail "/api/agents without the key answered $code, want 401"
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/api/agents" | grep -q '"agents"' || fail "/api/agents with the key"
# The Dockerfile's HEALTHCHECK command, as the runtime would run it.
"${run[@]}" exec "$name" /usr/local/bin/agentd health --timeout 4s >/dev/null || fail "the image's health check command failed"
user=$("${run[@]}" inspect "$name" --format '{{.Config.User}}')
[ "$user" = "65532:65532" ] || fail "runs as $user, want 65532:65532"
"${run[@]}" stop -t 20 "$name" >/dev/null
status=$("${run[@]}" inspect "$name" --format '{{.State.ExitCode}}')
[ "$status" = 0 ] || fail "SIGTERM ended it with status $status, want 0"
echo "image.sh: $IMAGE:$VERSION ran with $tool: ready, API key enforced, health check ok, non-root, clean stop"
