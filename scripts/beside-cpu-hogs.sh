#!/usr/bin/env bash
# Run a command beside one busy loop per core, as on a shared CI machine, and stop the loops after.
#
#   bash scripts/beside-cpu-hogs.sh COMMAND [ARGS...]
#
# HOGS overrides the number of busy loops (default: nproc). The command's exit status is the script's.
# Each loop is a child of this script, killed by its own id when the command ends (or is interrupted);
# each also stops by itself after HOG_LIMIT_S seconds (default 3600), should this script be killed hard.
set -uo pipefail
if [ "$#" -eq 0 ]; then
    echo "usage: bash scripts/beside-cpu-hogs.sh COMMAND [ARGS...]" >&2
    exit 2
fi
count="${HOGS:-$(nproc)}"
limit="${HOG_LIMIT_S:-3600}"
hogs=()
stop_hogs() {
    for pid in "${hogs[@]}"; do
        kill "$pid" 2>/dev/null
    done
    wait "${hogs[@]}" 2>/dev/null
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$count"); do
    timeout "$limit" sh -c 'while :; do :; done' &
    hogs+=("$!")
done
echo "beside-cpu-hogs: $count busy loop(s) running (ids ${hogs[*]}); running: $*" >&2
"$@"
status=$?
echo "beside-cpu-hogs: the command ended with status $status; stopping the busy loops" >&2
exit "$status"
