#!/usr/bin/env bash
# Make a Docker engine answer on this machine, for the live collector's sandbox.
#
# Idempotent: does nothing when an engine already answers. Otherwise installs Debian's engine
# (docker.io: dockerd, containerd, runc) if missing, starts it (through systemd where systemd
# runs, else as a background daemon), and waits until `docker info` answers. If the daemon
# does not come up with its defaults (overlay2 storage, a bridge network with iptables rules),
# it is started again with settings that need less of the kernel: vfs storage, no iptables,
# no bridge (the sandbox runs on the host's network, so it needs none of them).
#
# Needs root. The daemon's log: /var/log/deskscore-dockerd.log.
set -euo pipefail

LOG=/var/log/deskscore-dockerd.log
WAIT_S=${DESKSCORE_ENGINE_WAIT_S:-60}

answers() {
    if command -v docker >/dev/null 2>&1; then
        docker info >/dev/null 2>&1
    else
        return 1
    fi
}

wait_for_engine() {
    local pid=${1:-}
    local deadline=$((SECONDS + WAIT_S))
    while ((SECONDS < deadline)); do
        if answers; then
            return 0
        fi
        if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
            return 1
        fi
        sleep 0.5
    done
    return 1
}

if answers; then
    echo "docker engine: already running ($(docker info --format '{{.ServerVersion}}, {{.Driver}}'))"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    echo "docker engine: none answers, and starting one needs root" >&2
    exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
    echo "docker engine: installing Debian's docker.io"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi

if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1; then
    systemctl start docker || true
    if wait_for_engine; then
        echo "docker engine: started by systemd"
        exit 0
    fi
fi

start_daemon() {
    # setsid: the daemon outlives this script and the shell that ran it.
    setsid dockerd "$@" >>"$LOG" 2>&1 </dev/null &
    DAEMON_PID=$!
}

start_daemon
if ! wait_for_engine "$DAEMON_PID"; then
    echo "docker engine: dockerd did not answer with its defaults; its log ends:" >&2
    tail -n 15 "$LOG" >&2 || true
    kill "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
    rm -f /var/run/docker.pid
    echo "docker engine: retrying with vfs storage, no iptables, no bridge" >&2
    start_daemon --storage-driver=vfs --iptables=false --bridge=none
    if ! wait_for_engine "$DAEMON_PID"; then
        echo "docker engine: dockerd did not start; its log ends:" >&2
        tail -n 30 "$LOG" >&2 || true
        exit 1
    fi
fi
echo "docker engine: dockerd $(docker info --format '{{.ServerVersion}}, storage {{.Driver}}') (pid $DAEMON_PID, log $LOG)"
