#!/usr/bin/env bash
# Counts what a folder of N one-stroke projects costs the new peer b that it
# is shared with (issue 13, docs/performance.md "Round trips and disk syncs
# of a catch-up"): b's fsync/fdatasync calls (strace -c, b run under it) and
# its apply transactions (storyteller_sync_apply_seconds_count), and the time
# until b lists every project. Both daemons are stopped at the end.
#   bash Tests/bench/catch-up-syncs.sh [BUILD_DIR] [N]   (default .build/release, 1000)
#   SYNC_DELAY_US=3000 bash Tests/bench/catch-up-syncs.sh   (a disk whose syncs take 3 ms more)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/release}
n=${2:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/catch-up-syncs.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export STORYTELLER_DISCOVERY=false
api() { local name=$1; shift; curl -sf --unix-socket "$work/$name/control.sock" "$@"; }
field() { python3 -c "import sys, json; print(json.load(sys.stdin)$1)"; }
wait_ready() { for _ in $(seq 1 200); do api "$1" http://d/v1/status >/dev/null 2>&1 && return; sleep 0.05; done; exit 1; }

mkdir -p "$work/a" "$work/b"
"$bin/storytellerd" --data-dir "$work/a" --listen 127.0.0.1:0 --name a --log-level warning >"$work/a.out" 2>"$work/a.log" &
pids+=($!)
wait_ready a
api a -X POST http://d/v1/library/folders -H 'content-type: application/json' -d '{"name":"Show"}' >/dev/null
for i in $(seq 1 "$n"); do
    id=$(api a -X POST http://d/v1/projects -H 'content-type: application/json' -d "{\"name\":\"P$i\",\"folder\":\"Show\"}" | field '["id"]')
    api a -X POST "http://d/v1/projects/$id/edits" -H 'content-type: application/json' \
        -d '{"ops":[{"op":"scene.add"},{"op":"shot.add","scene":"$0"},{"op":"layer.add","shot":"$1","name":"ink"},{"op":"stroke.add","layer":"$2","points":[0.1,0.1,0.5,0.2,0.2,0.5]}]}' >/dev/null
done
# SYNC_DELAY_US=N: every fsync/fdatasync of b takes N µs longer (strace's
# fault injection), as on a slower disk: the groups a session stores grow.
inject=()
[ -n "${SYNC_DELAY_US:-}" ] && inject=(-e "inject=fsync,fdatasync:delay_exit=$SYNC_DELAY_US")
strace -f -c -e trace=fsync,fdatasync "${inject[@]}" -o "$work/b.strace" \
    "$bin/storytellerd" --data-dir "$work/b" --listen 127.0.0.1:0 --name b --log-level warning >"$work/b.out" 2>"$work/b.log" &
tracer=$!
pids+=($tracer)
wait_ready b
a_id=$(api a http://d/v1/identity | field '["peerID"]'); b_id=$(api b http://d/v1/identity | field '["peerID"]')
a_port=$(api a http://d/v1/status | field '["listenPort"]'); b_port=$(api b http://d/v1/status | field '["listenPort"]')
api a -X POST http://d/v1/peers -H 'content-type: application/json' -d "{\"id\":\"$b_id\",\"address\":\"127.0.0.1:$b_port\"}" >/dev/null
api b -X POST http://d/v1/peers -H 'content-type: application/json' -d "{\"id\":\"$a_id\",\"address\":\"127.0.0.1:$a_port\"}" >/dev/null
sleep 2
start=$(date +%s.%N)
api a -X PUT "http://d/v1/library/nodes/Show/shares/$b_id" -H 'content-type: application/json' -d '{"mode":"read-write"}' >/dev/null
for _ in $(seq 1 3000); do
    [ "$(api b http://d/v1/projects | field '.__len__()')" = "$n" ] && break
    sleep 0.1
done
held=$(printf "%.3f" "$(echo "$(date +%s.%N) - $start" | bc)")
sleep 3
applies=$(api b http://d/v1/metrics | awk '/^storyteller_sync_apply_seconds_count/ { print $2 }')
kill -TERM "$(pgrep -P "$tracer" storytellerd)"
wait "$tracer" || true
syncs=$(awk '$NF == "fdatasync" || $NF == "fsync" { sum += $4 } END { print sum }' "$work/b.strace")
echo "{\"projects\": $n, \"held_s\": $held, \"apply_transactions\": ${applies:-0}, \"syncs_on_b\": $syncs}"
