#!/usr/bin/env bash
# Times project packages (issue 15): a 120-shot board (3 scenes x 40 shots,
# 50 strokes of 80 points per shot, no media) made on daemon a through the
# control API, exported three times with `storyteller export package`, each
# package imported as a new project on a fresh daemon (b1, b2, b3), and once
# merged back into a (nothing new). Every daemon is stopped at the end.
#   bash Tests/bench/package-bench.sh [BUILD_DIR]   (default .build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/release}
work=$(mktemp -d "${TMPDIR:-/tmp}/package-bench.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
for name in a b1 b2 b3; do
    mkdir -p "$work/$name"
    "$bin/storytellerd" --data-dir "$work/$name" --listen 127.0.0.1:0 --name "$name" --no-discovery >"$work/$name.log" 2>&1 &
    pids+=($!)
done
for name in a b1 b2 b3; do
    for _ in $(seq 100); do grep -q ready "$work/$name.log" && break; sleep 0.1; done
done
python3 Tests/bench/package-bench.py "$bin/storyteller" "$work/a/control.sock" "$work/package" \
    "$work/b1/control.sock" "$work/b2/control.sock" "$work/b3/control.sock"
