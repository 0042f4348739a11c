#!/usr/bin/env bash
# Fuzzes the control API of a real daemon with schemathesis, driven by
# docs/openapi.json: random valid and invalid requests for every operation
# (and stateful sequences following the spec's links). Fails on any 5xx, a
# dropped connection, or an answer that does not match the spec (status,
# content type, headers, schema) or an undeclared method not answered 405
# with Allow.
#
#   bash Tests/openapi/fuzz.sh [EXAMPLES]     (needs a debug build: swift build)
#
# Not checked, on purpose: that every schema-valid request is accepted (a peer
# id's check characters, a stroke's pressure range and names that trim to
# nothing cannot be said in JSON Schema), that null for an optional field is
# refused (the daemon takes it as absent), and that a deleted project is gone
# (deletion is a restorable trash; GET still shows it with deleted: true).
set -euo pipefail
cd "$(dirname "$0")/../.."
examples="${1:-25}"
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "schemathesis==4.32.5"

bin=$(swift build --show-bin-path)
"$bin/storytellerd" --data-dir "$work/state" --socket "$work/control.sock" --listen 127.0.0.1:0 \
    --log-level warning > "$work/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do [ -S "$work/control.sock" ] && break; sleep 0.05; done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 Tests/openapi/unix_proxy.py "$work/control.sock" "$port" &
pids+=($!)
for _ in $(seq 1 200); do curl -s "http://127.0.0.1:$port/v1/status" >/dev/null && break; sleep 0.05; done

status=0
"$work/venv/bin/schemathesis" run docs/openapi.json --url "http://127.0.0.1:$port" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,unsupported_method \
    --exclude-path /v1/events --exclude-path /v1/backup --exclude-path '/v1/previews/{preview}/hold' \
    --max-examples "$examples" --seed 20261122 --request-timeout 20 --no-color || status=$?
if ! kill -0 "${pids[0]}" 2>/dev/null; then
    echo "the daemon died during the fuzzing:" >&2
    tail -50 "$work/daemon.log" >&2
    exit 1
fi
exit "$status"
