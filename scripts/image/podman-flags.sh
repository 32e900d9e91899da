#!/usr/bin/env bash
# What qkv's image needs from podman on this host for its bubblewrap sandboxes.
#   podman-flags.sh [PROFILE]                  prints the `podman run` options, one a line, and writes the
#                                              seccomp profile they name (default build/image/seccomp.json)
#   podman-flags.sh --containers-conf FILE     writes a containers.conf with the host-specific part (limits,
#                                              runtime) for `podman kube play`, and the seccomp profile
#                                              beside it as seccomp.json (for --seccomp-profile-root)
# The options:
#   --security-opt unmask=/proc/*      bubblewrap mounts a fresh /proc for each sandbox, which the kernel
#                                      refuses while parts of the container's /proc are masked over;
#   --security-opt seccomp=PROFILE     podman's default profile with sethostname allowed (each sandbox names
#                                      its own UTS namespace); user namespaces are allowed by the default;
#   --ulimit nofile=N:N, nproc=N:N     this host's hard limits (nproc at most kernel.pid_max, which podman
#                                      caps its own conmon to): podman otherwise raises them, which fails
#                                      where the host withholds CAP_SYS_RESOURCE;
#   --runtime runc                     only on a hybrid cgroup v1/v2 host, where crun refuses to start.
# The container needs no extra capability and is not privileged; sandboxes get no cgroup of their own in
# it (processes and memory are then bounded by rlimits and qkv's seccomp filter, see docs/grading.md).
set -euo pipefail
here="$(dirname "$0")"

limits() {  # "nofile=N:N" and "nproc=N:N", where the hard limit is not unlimited
  local limit hard pids
  for limit in nofile:n nproc:u; do
    hard=$(ulimit "-H${limit#*:}")
    if [ "${limit%:*}" = nproc ]; then
      pids=$(cat /proc/sys/kernel/pid_max)
      if [ "$hard" = unlimited ] || [ "$hard" -gt "$pids" ]; then hard=$pids; fi
    fi
    [ "$hard" = unlimited ] || echo "${limit%:*}=$hard:$hard"
  done
}

hybrid_cgroups() {
  [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/pids ]
}

profile() {
  mkdir -p "$(dirname "$1")"
  python3 "$here/seccomp-profile.py" /usr/share/containers/seccomp.json "$1"
}

if [ "${1:-}" = --containers-conf ]; then
  conf="${2:?--containers-conf needs the file to write}"
  profile "$(dirname "$conf")/seccomp.json"
  {
    echo "[containers]"
    echo "default_ulimits = [$(limits | sed 's/.*/"&"/' | paste -sd, -)]"
    if hybrid_cgroups; then printf '[engine]\nruntime = "runc"\n'; fi
  } >"$conf"
  exit 0
fi
seccomp="${1:-build/image/seccomp.json}"
profile "$seccomp"
echo "--security-opt=unmask=/proc/*"
echo "--security-opt=seccomp=$(realpath "$seccomp")"
limits | sed 's/^/--ulimit=/'
if hybrid_cgroups; then echo "--runtime=runc"; fi
