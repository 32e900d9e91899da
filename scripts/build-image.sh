#!/usr/bin/env bash
# Builds qkv's OCI image from Debian packages and PyPI wheels, with no container registry involved:
#   1. mmdebstrap makes a Debian bookworm root file system (Python, bubblewrap, util-linux's setpriv, the
#      PostgreSQL server and client) from the Debian mirror;
#   2. pip builds qkv's wheel from this tree and fetches its dependencies' wheels from PyPI;
#   3. a virtual environment at /opt/qkv is installed into a copy of that root from those wheels only;
#   4. `podman import` turns the root into an image, with qkv as its entry point.
# Each step's output is kept under build/image/, named by a hash of what it was made from, so a second
# build only redoes what changed: the Debian root when the package list or mirror changes, the dependency
# wheels when pyproject.toml changes, and the final image when any file it is made of changes.
#
# Usage: scripts/build-image.sh [IMAGE]     (default localhost/qkv:latest; needs root, podman, mmdebstrap)
# Environment: QKV_DEBIAN_MIRROR (default: the first .../debian URI in /etc/apt/sources.list*, else
# http://deb.debian.org/debian), QKV_IMAGE_CACHE (default build/image), QKV_IMAGE_PYTHON (a Python 3.11
# with pip that builds the wheels; default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

image="${1:-localhost/qkv:latest}"
cache="${QKV_IMAGE_CACHE:-build/image}"
python="${QKV_IMAGE_PYTHON:-.venv/bin/python}"
suite=bookworm
# setpriv (util-linux) drops root to a sandbox uid before bubblewrap; postgresql runs the compose file's
# database from this same image; its client tools back up and restore (qkv backup).
packages=python3,python3-venv,bubblewrap,util-linux,ca-certificates,postgresql,postgresql-client,tini
extras="web,grader"

say() { echo "qkv image: $*"; }
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { say "$tool is missing (apt-get install podman mmdebstrap; scripts/setup-system.sh --test)." >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { say "building the image needs root (mmdebstrap's root mode and rootful podman)." >&2; exit 1; }

mirror="${QKV_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror=$(grep -rhoE '(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | head -n 1 | awk '{print $2}') || true
  mirror="${mirror:-http://deb.debian.org/debian}"
fi

hash_of() { sha256sum | cut -c1-16; }
mkdir -p "$cache"
exec 9>"$cache/.lock" && flock 9  # one build at a time per cache (make image beside the tests)
start=$(date +%s)

# 1. The Debian root, as a tarball.
base_key=$(printf '%s\n' "$suite" "$mirror" "$packages" "base-v1" | hash_of)
base="$cache/debian-$base_key.tar"
if [ ! -s "$base" ]; then
  say "making the Debian $suite root from $mirror (a minute or two, once)"
  rm -f "$cache"/debian-*.tar
  mmdebstrap --quiet --mode=root --format=tar --variant=minbase --include="$packages" \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    "$suite" "$base.partial" "$mirror"
  mv "$base.partial" "$base"
fi

# 2. The wheels: the dependencies by pyproject.toml's hash, qkv's own from the tree every time.
deps_key=$( (cat pyproject.toml; echo "$extras") | hash_of)
deps="$cache/wheels-$deps_key"
if [ ! -f "$deps/.complete" ]; then
  say "fetching the dependencies' wheels from PyPI"
  rm -rf "$cache"/wheels-*
  "$python" -m pip wheel --quiet --wheel-dir "$deps" ".[$extras]"
  rm -f "$deps"/qkv-*.whl
  touch "$deps/.complete"
fi
inputs=(src pyproject.toml README.md scripts/build-image.sh scripts/image)
tree_files() {  # NUL-separated: the files the image is made of (outside git: all but caches)
  git ls-files -z --cached --others --exclude-standard "${inputs[@]}" 2>/dev/null \
    || find "${inputs[@]}" -type f -not -path '*/__pycache__/*' -print0
}
tree_key=$( (echo "$base_key $deps_key"; tree_files | sort -z | xargs -0 sha256sum) | hash_of)
tag="localhost/qkv:tree-$tree_key"
if podman image exists "$tag"; then
  podman tag "$tag" "$image"
  say "$image is up to date ($tag), $(( $(date +%s) - start )) s"
  exit 0
fi
own="$cache/own"
rm -rf "$own" && mkdir -p "$own"
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$own" .

# 3. The root with qkv installed, from the wheels alone (no network inside the chroot).
stage=$(mktemp -d "${TMPDIR:-/tmp}/qkv-image.XXXXXX")
trap 'rm -rf "$stage"' EXIT
tar -C "$stage" -xf "$base"
mkdir -p "$stage/tmp/wheels"
cp "$deps"/*.whl "$own"/*.whl "$stage/tmp/wheels/"
chroot "$stage" /usr/bin/python3 -m venv /opt/qkv
chroot "$stage" /opt/qkv/bin/pip install --quiet --no-index --no-cache-dir --find-links /tmp/wheels "qkv[$extras]"
chroot "$stage" /opt/qkv/bin/python -m compileall -q /opt/qkv/lib >/dev/null || true
rm -rf "$stage/tmp/wheels"
install -m 0755 scripts/image/qkv-postgres "$stage/usr/local/bin/qkv-postgres"
install -d -m 0755 "$stage/var/lib/qkv"

# 4. The image. Root inside runs the sandboxes (each drops to a uid of its own with setpriv).
tar -C "$stage" -c . | podman import \
  --change 'ENV PATH=/opt/qkv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV QKV_DATABASE_URL=sqlite:////var/lib/qkv/qkv.sqlite3' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'WORKDIR /var/lib/qkv' \
  --change 'VOLUME /var/lib/qkv' \
  --change 'EXPOSE 8000' \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--", "/opt/qkv/bin/qkv"]' \
  --change 'CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]' \
  --message "qkv from $(git rev-parse --short HEAD 2>/dev/null || echo a tree)" \
  - "$tag" >/dev/null
podman tag "$tag" "$image"
rm -rf "$stage"
# Older builds' tags go (an image still used by a container, or by another tag, stays).
podman images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/qkv:tree-' | grep -vx "$tag" \
  | xargs -r podman rmi >/dev/null 2>&1 || true
say "built $image ($tag) in $(( $(date +%s) - start )) s"
