#!/usr/bin/env bash
# Installs and starts the system components qkv uses, where we are allowed to (root on Debian).
#   --run   bubblewrap (the grading sandbox)
#   --image bubblewrap and what `make image` builds and runs the image with: podman (with runc, for hosts
#           whose hybrid cgroups crun refuses, and catatonit, its pods' pause process) and mmdebstrap
#   --test  bubblewrap, Chromium (browser tests), PostgreSQL (store tests; its client tools back up and
#           restore), Prometheus (the metrics test scrapes a real server), Caddy (the HTTPS test puts it in
#           front of qkv serve) and the --image set (the image test builds and runs it); starts PostgreSQL
# Elsewhere it only says what is missing: the server still starts, and tests that need a missing part skip
# with its name (under CI=true such a skip is a failure).
set -u
mode="${1:---test}"
packages=(bubblewrap)
image_packages=(podman runc catatonit mmdebstrap)
[ "$mode" = "--image" ] && packages+=("${image_packages[@]}")
[ "$mode" = "--test" ] && packages+=(chromium postgresql prometheus caddy "${image_packages[@]}")

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "qkv: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || true
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
      echo "qkv: could not install ${missing[*]} with apt-get." >&2; exit 1; }
  else
    echo "qkv: these system packages are missing: ${missing[*]}."
    echo "qkv: install them as root (apt-get install ${missing[*]}) for sandboxed grading and the full test suite."
    exit 0
  fi
fi

if [ "$mode" = "--test" ] && [ "$(id -u)" = 0 ] && command -v pg_lsclusters >/dev/null; then
  cluster=$(pg_lsclusters -h 2>/dev/null | head -n 1)
  if [ -n "$cluster" ]; then
    read -r version name _ <<<"$cluster"
    pg_ctlcluster "$version" "$name" start 2>/dev/null || true
    # A role and database for the tests: postgresql+psycopg://qkv:qkv@127.0.0.1:5432/qkv_test
    su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='qkv'\"" | grep -q 1 \
      || su postgres -c "psql -qc \"CREATE ROLE qkv LOGIN PASSWORD 'qkv' CREATEDB\""
    for db in qkv_test; do
      su postgres -c "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname='$db'\"" | grep -q 1 \
        || su postgres -c "createdb -O qkv $db"
    done
  fi
fi
exit 0
