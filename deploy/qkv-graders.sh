#!/usr/bin/env bash
# Starts graders in the pod of deploy/qkv-pod.yaml until it has N of them (default 2): each a container of
# the image running `qkv grader`, with the options the bubblewrap sandbox needs on this host
# (scripts/image/podman-flags.sh). They reach the pod's PostgreSQL at 127.0.0.1:5432.
# Environment: QKV_IMAGE (default localhost/qkv:latest), QKV_POD (default qkv), QKV_DATABASE_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-2}"
image="${QKV_IMAGE:-localhost/qkv:latest}"
pod="${QKV_POD:-qkv}"
url="${QKV_DATABASE_URL:-postgresql+psycopg://qkv:change-me@127.0.0.1:5432/qkv}"
mapfile -t flags < <(bash scripts/image/podman-flags.sh build/image/seccomp.json)
for i in $(seq 1 "$count"); do
  name="$pod-grader-$i"
  podman container exists "$name" && continue
  podman run --detach --pod "$pod" --name "$name" --restart always "${flags[@]}" \
    "$image" grader --concurrency 1 --database-url "$url" >/dev/null
  echo "qkv: started $name"
done
