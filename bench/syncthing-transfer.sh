#!/usr/bin/env bash
# syncthing-transfer.sh: time Syncthing moving one large random file between
# two Syncthing daemons on loopback on this machine, so that
# `storyteller-bench media` (an image moving between two storytellerd daemons
# over TLS on loopback) can be read beside it.
#
# What it does, every step bounded by --timeout seconds:
#   1. installs Debian's `syncthing` package if it is missing (apt-get, as
#      root) and prints `syncthing --version`;
#   2. makes a temporary directory, removed on exit by a trap that also stops
#      every process this script started;
#   3. generates two homes (a and b), reads both device IDs and writes both
#      config.xml files before the first start: REST API on 127.0.0.1:<free
#      port> with a known API key, sync protocol on tcp://127.0.0.1:<free port>
#      only, no global or local discovery, no relays, no NAT, no usage
#      reporting, no upgrades, no crash reporting, each device knowing the
#      other at its explicit tcp:// address, and one folder (same ID, type
#      sendreceive) shared by both, its watcher on or off, its periodic rescan
#      a day away;
#   4. starts a, then b, and waits until both REST APIs answer, the two devices
#      are connected both ways and both folders are idle;
#   5. per run (--runs, fresh random content and a new name each time): writes
#      the file OUTSIDE the folder (its SHA-256 computed then, untimed), calls
#      sync(2) so no run pays for the writeback of the one before, then
#      starts the clock, moves it into a's folder (a rename on one file
#      system) and, in --mode scan, at once asks a to scan it
#      (POST /rest/db/scan?folder=ID&sub=NAME); in --mode watcher nothing is
#      asked and a's filesystem watcher (fsWatcherDelayS, 1 s by default) has
#      to notice it. The clock stops at the first poll at which all of these
#      hold on b: the file is at its final name with its full size,
#      /rest/db/status says idle with nothing needed, and /rest/db/completion
#      says 100 %. Then (untimed) b's copy is hashed and must match, and a must
#      see b at 100 % as well (also reported, timed from the same start);
#   6. prints `key: value` lines, or with --json one JSON object.
#
# Sizes: the file is --size-mib MiB (2^20 bytes; default 200, i.e.
# 209,715,200 bytes), as `storyteller-bench media --megabytes` counts them;
# rates are MB/s with MB = 10^6 bytes, as that benchmark reports them.
#
# Needs: bash, python3 (standard library only), coreutils, and syncthing
# (installed here from Debian when missing; bookworm ships 1.19.2). Run as
# root if syncthing has to be installed. Nothing outside the temporary
# directory is written, apart from that package.
#
# Usage: bench/syncthing-transfer.sh [--mode scan|watcher] [--runs N]
#          [--size-mib N] [--watcher on|off] [--watcher-delay S]
#          [--place move|copy|write] [--timeout S] [--json] [--keep]

set -euo pipefail

# ---------------------------------------------------------------- arguments

MODE=scan            # scan: POST /rest/db/scan right after placing the file; watcher: nothing
RUNS=3               # files moved, each timed on its own
SIZE_MIB=200         # MiB (2^20 bytes) per file
WATCHER=""           # the folder's fsWatcherEnabled; default: off in scan mode, on in watcher mode
WATCHER_DELAY=1      # fsWatcherDelayS (Syncthing's default is 10)
PLACE=move           # how the file enters a's folder, all timed: move (rename from outside, atomic),
                     # copy (one in-kernel copy), write (1 MiB write() calls, as an app saving it)
TIMEOUT=120          # seconds any single wait may take before the script gives up
JSON=0
KEEP=0

usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit "${1:-0}"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --mode) MODE="$2"; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --size-mib) SIZE_MIB="$2"; shift 2 ;;
        --watcher) WATCHER="$2"; shift 2 ;;
        --watcher-delay) WATCHER_DELAY="$2"; shift 2 ;;
        --place) PLACE="$2"; shift 2 ;;
        --timeout) TIMEOUT="$2"; shift 2 ;;
        --json) JSON=1; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage 0 ;;
        *) echo "unknown argument: $1" >&2; usage 2 >&2 ;;
    esac
done

case "$MODE" in scan|watcher) ;; *) echo "--mode must be scan or watcher" >&2; exit 2 ;; esac
case "$PLACE" in move|copy|write) ;; *) echo "--place must be move, copy or write" >&2; exit 2 ;; esac
if [ -z "$WATCHER" ]; then
    if [ "$MODE" = watcher ]; then WATCHER=on; else WATCHER=off; fi
fi
case "$WATCHER" in on|off) ;; *) echo "--watcher must be on or off" >&2; exit 2 ;; esac
if [ "$MODE" = watcher ] && [ "$WATCHER" = off ]; then
    echo "--mode watcher needs the watcher on" >&2; exit 2
fi
for n in "$RUNS" "$SIZE_MIB" "$WATCHER_DELAY" "$TIMEOUT"; do
    case "$n" in ''|*[!0-9]*|0) echo "--runs, --size-mib, --watcher-delay and --timeout must be positive integers" >&2; exit 2 ;; esac
done

SIZE_BYTES=$((SIZE_MIB * 1024 * 1024))
FOLDER_ID=bench-folder
RESCAN_S=86400       # periodic full rescan: a day away, never during a run

log() { echo "[syncthing-transfer] $*" >&2; }

# ------------------------------------------------------------- 1. syncthing

if ! command -v syncthing >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "syncthing is not installed and installing it needs root (apt-get install -y syncthing)" >&2
        exit 1
    fi
    log "syncthing not found: apt-get install -y syncthing"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y syncthing >&2; then
        log "install failed; running apt-get update first and trying again"
        apt-get update >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y syncthing >&2
    fi
fi
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed" >&2; exit 1; }

ST_VERSION_LINE=$(timeout 30 syncthing --version)
ST_VERSION=$(echo "$ST_VERSION_LINE" | awk '{print $2}')
log "$ST_VERSION_LINE"

# ------------------------------------------ 2. temporary directory, cleanup

TMP=$(mktemp -d "${TMPDIR:-/tmp}/syncthing-transfer.XXXXXX")
PIDS=()

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    # Stop every daemon this script started: SIGTERM, up to 10 s, then SIGKILL.
    local pid i
    for pid in "${PIDS[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        for i in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "pid $pid did not stop on SIGTERM; SIGKILL"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    if [ "$status" -ne 0 ]; then
        for n in a b; do
            if [ -f "$TMP/$n.log" ]; then
                log "last lines of daemon $n's log:"
                tail -n 20 "$TMP/$n.log" >&2 || true
            fi
        done
    fi
    if [ "$KEEP" -eq 1 ]; then
        log "kept $TMP"
    else
        rm -rf "$TMP"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The helper: free ports, config.xml edits, REST waits and the timed runs.
# Standard library only; every HTTP call and every wait has a deadline.
cat >"$TMP/helper.py" <<'PY'
import copy, hashlib, json, os, shutil, socket, sys, time
import urllib.request
import xml.etree.ElementTree as ET

def fail(msg):
    print(f"[syncthing-transfer] {msg}", file=sys.stderr)
    sys.exit(1)

def free_ports(n):
    # Hold every socket until all are chosen so no port is handed out twice.
    socks, ports = [], []
    for _ in range(int(n)):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    print(" ".join(map(str, ports)))

def set_text(parent, tag, value):
    el = parent.find(tag)
    if el is None:
        el = ET.SubElement(parent, tag)
    el.text = str(value)

def configure(path, self_id, peer_id, peer_name, gui_port, listen_port, peer_port,
              apikey, folder_id, folder_path, watcher, watcher_delay, rescan):
    tree = ET.parse(path)
    root = tree.getroot()
    gui = root.find("gui")
    gui.set("enabled", "true")
    gui.set("tls", "false")
    set_text(gui, "address", f"127.0.0.1:{gui_port}")
    set_text(gui, "apikey", apikey)
    opts = root.find("options")
    for tag, value in [
        ("listenAddress", f"tcp://127.0.0.1:{listen_port}"),
        ("globalAnnounceEnabled", "false"),
        ("localAnnounceEnabled", "false"),
        ("relaysEnabled", "false"),
        ("natEnabled", "false"),
        ("urAccepted", "-1"),
        ("urSeen", "3"),
        ("autoUpgradeIntervalH", "0"),
        ("crashReportingEnabled", "false"),
        ("startBrowser", "false"),
        ("announceLANAddresses", "false"),
        ("reconnectionIntervalS", "5"),
        ("restartOnWakeup", "false"),
        # Syncthing lowers its own CPU and I/O priority by default; storytellerd
        # does not, so neither does this benchmark.
        ("setLowPriority", "false"),
    ]:
        set_text(opts, tag, value)
    # Only one listen address: drop any others.
    for extra in opts.findall("listenAddress")[1:]:
        opts.remove(extra)
    for extra in opts.findall("globalAnnounceServer"):
        opts.remove(extra)
    defaults = root.find("defaults")
    # The peer: a copy of the generated default device, with its address.
    peer = copy.deepcopy(defaults.find("device"))
    peer.set("id", peer_id)
    peer.set("name", peer_name)
    for a in peer.findall("address"):
        peer.remove(a)
    addr = ET.Element("address")
    addr.text = f"tcp://127.0.0.1:{peer_port}"
    peer.insert(0, addr)
    # The folder: a copy of the generated default folder (so every field has
    # this version's default), shared by both devices.
    folder = copy.deepcopy(defaults.find("folder"))
    folder.set("id", folder_id)
    folder.set("label", folder_id)
    folder.set("path", folder_path)
    folder.set("type", "sendreceive")
    folder.set("rescanIntervalS", str(rescan))
    folder.set("fsWatcherEnabled", "true" if watcher == "on" else "false")
    folder.set("fsWatcherDelayS", str(watcher_delay))
    # The default, stated: b fsyncs each file before renaming it into place
    # (and its directory after), as storytellerd fsyncs a finished blob.
    set_text(folder, "disableFsync", "false")
    for d in folder.findall("device"):
        folder.remove(d)
    for i, dev_id in enumerate([self_id, peer_id]):
        d = ET.Element("device", {"id": dev_id, "introducedBy": ""})
        ET.SubElement(d, "encryptionPassword").text = ""
        folder.insert(1 + i, d)
    # Place both after the existing self device.
    index = list(root).index(root.find("device")) + 1
    root.insert(index, peer)
    root.insert(0, folder)
    tree.write(path)

class Api:
    def __init__(self, port, key):
        self.base = f"http://127.0.0.1:{port}"
        self.key = key

    def call(self, method, path, timeout=10):
        req = urllib.request.Request(self.base + path, method=method,
                                     headers={"X-API-Key": self.key})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body.strip() else None

    def get(self, path):
        return self.call("GET", path)

def wait_until(what, deadline, check, interval=0.1):
    last = None
    while True:
        try:
            got = check()
            if got:
                return got
        except Exception as e:  # not up yet
            last = e
        if time.monotonic() > deadline:
            fail(f"timed out waiting for {what} (last error: {last})")
        time.sleep(interval)

def wait_api(port, key, timeout):
    api = Api(port, key)
    deadline = time.monotonic() + float(timeout)
    wait_until(f"REST API on port {port}", deadline,
               lambda: api.get("/rest/system/ping").get("ping") == "pong")

def wait_ready(port_a, port_b, key, id_a, id_b, folder, timeout):
    a, b = Api(port_a, key), Api(port_b, key)
    deadline = time.monotonic() + float(timeout)
    for api, name in [(a, "a"), (b, "b")]:
        wait_until(f"REST API of {name}", deadline,
                   lambda api=api: api.get("/rest/system/ping").get("ping") == "pong")
    def connected(api, peer):
        c = api.get("/rest/system/connections")["connections"].get(peer, {})
        return c.get("connected") is True
    wait_until("a connected to b", deadline, lambda: connected(a, id_b))
    wait_until("b connected to a", deadline, lambda: connected(b, id_a))
    for api, name in [(a, "a"), (b, "b")]:
        wait_until(f"folder idle on {name}", deadline,
                   lambda api=api: api.get(f"/rest/db/status?folder={folder}").get("state") == "idle")
    conn = a.get("/rest/system/connections")["connections"][id_b]
    print(json.dumps({"address": conn.get("address"), "type": conn.get("type"),
                      "crypto": conn.get("crypto")}))

def write_random(path, size):
    h = hashlib.sha256()
    chunk = 1 << 20
    with open(path, "wb") as f:
        left = size
        while left > 0:
            data = os.urandom(min(chunk, left))
            f.write(data)
            h.update(data)
            left -= len(data)
    return h.hexdigest()

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            data = f.read(1 << 20)
            if not data:
                return h.hexdigest()
            h.update(data)

def measure(port_a, port_b, key, id_b, folder, staging, dir_a, dir_b, name,
            size, mode, place, timeout):
    a, b = Api(port_a, key), Api(port_b, key)
    size = int(size)
    src = os.path.join(staging, name)
    dst_a = os.path.join(dir_a, name)
    dst_b = os.path.join(dir_b, name)
    want = write_random(src, size)          # untimed, outside the folder
    # Untimed: flush what earlier runs (and this file) left dirty, so every
    # run starts from the same page-cache state and no run pays for the
    # writeback of the one before it.
    os.sync()
    deadline = time.monotonic() + float(timeout)

    t0 = time.monotonic()                   # ---- the clock starts
    if place == "move":
        os.rename(src, dst_a)
    elif place == "copy":
        shutil.copyfile(src, dst_a)        # copy_file_range/sendfile: one call
    else:
        # "write": as an application saving it, 1 MiB write() at a time
        # (the watcher sees the file grow).
        with open(src, "rb") as fin, open(dst_a, "wb") as fout:
            while True:
                data = fin.read(1 << 20)
                if not data:
                    break
                fout.write(data)
        os.unlink(src)
    t_placed = time.monotonic()
    t_scanned = None
    if mode == "scan":
        # Synchronous in this version: returns once a has hashed the file.
        a.call("POST", f"/rest/db/scan?folder={folder}&sub={name}", timeout=float(timeout))
        t_scanned = time.monotonic()

    t_file = t_done = None
    while t_done is None:
        now = time.monotonic()
        if now > deadline:
            fail(f"timed out waiting for {name} on b")
        if t_file is None:
            try:
                if os.stat(dst_b).st_size == size:
                    t_file = now
            except FileNotFoundError:
                pass
        if t_file is not None:
            try:
                st = b.get(f"/rest/db/status?folder={folder}")
                comp = b.get(f"/rest/db/completion?folder={folder}")
            except Exception:
                st, comp = {}, {}
            if (st.get("state") == "idle" and st.get("needBytes") == 0
                    and st.get("needFiles") == 0 and st.get("inSyncBytes") == st.get("globalBytes")
                    and comp.get("completion") == 100):
                t_done = time.monotonic()
                break
            time.sleep(0.01)
        else:
            time.sleep(0.005)
    # ---- the clock has stopped; what follows is checked, not timed into "seconds"
    # a's view of b: 100 % once b's index update reached a.
    wait_until("a to see b at 100 %", deadline, lambda: a.get(
        f"/rest/db/completion?folder={folder}&device={id_b}").get("completion") == 100, 0.01)
    t_a_sees_b = time.monotonic()
    got = sha256_file(dst_b)
    if got != want:
        fail(f"sha256 of b's copy {got} != {want}")
    info = a.get(f"/rest/db/file?folder={folder}&file={name}")
    glob = (info or {}).get("global", {})
    blocks = glob.get("numBlocks") or 0
    # No blockSize field in 1.19's answer: the power of two (>= 128 KiB)
    # that gives this many blocks for this size.
    block_size = 128 << 10
    while blocks and (size + block_size - 1) // block_size > blocks:
        block_size *= 2
    wait_until("a idle", deadline, lambda: a.get(f"/rest/db/status?folder={folder}").get("state") == "idle")
    secs = t_done - t0
    print(json.dumps({
        "seconds": round(secs, 4),
        "mb_s": round(size / 1e6 / secs, 2),
        "place_seconds": round(t_placed - t0, 4),
        "scan_seconds": round(t_scanned - t_placed, 4) if t_scanned else None,
        "file_on_b_seconds": round(t_file - t0, 4),
        "a_sees_b_complete_seconds": round(t_a_sees_b - t0, 4),
        "transfer_after_scan_seconds": round(t_done - t_scanned, 4) if t_scanned else None,
        "block_size": block_size if blocks else None,
        "num_blocks": glob.get("numBlocks"),
        "sha256_ok": True,
    }))

def summarize(fmt, meta_json, *runs_json):
    meta = json.loads(meta_json)
    runs = [json.loads(r) for r in runs_json]
    secs = sorted(r["seconds"] for r in runs)
    n = len(secs)
    median = secs[n // 2] if n % 2 else (secs[n // 2 - 1] + secs[n // 2]) / 2
    size = meta["file_size_bytes"]
    out = dict(meta)
    out.update({
        "runs": runs,
        "seconds": round(median, 4),
        "mb_s": round(size / 1e6 / median, 2),
        "seconds_min": round(secs[0], 4),
        "mb_s_best": round(size / 1e6 / secs[0], 2),
        "seconds_max": round(secs[-1], 4),
        "mb_s_worst": round(size / 1e6 / secs[-1], 2),
        "loadavg_end": open("/proc/loadavg").read().split()[0:3],
    })
    if fmt == "json":
        print(json.dumps(out))
        return
    for k, v in out.items():
        if k == "runs":
            continue
        if isinstance(v, list):
            v = " ".join(map(str, v))
        elif not isinstance(v, str):
            v = json.dumps(v)
        print(f"{k}: {v}")
    for i, r in enumerate(runs, 1):
        for k, v in r.items():
            if v is not None:
                print(f"run_{i}_{k}: {json.dumps(v)}")

if __name__ == "__main__":
    {"free-ports": free_ports, "configure": configure, "wait-api": wait_api,
     "wait-ready": wait_ready, "measure": measure, "summarize": summarize}[sys.argv[1]](*sys.argv[2:])
PY
# Each helper call also has an outer bound (its own waits have --timeout).
helper() { timeout "$((TIMEOUT + 60))" python3 "$TMP/helper.py" "$@"; }

# ------------------------------------------------- 3. homes and config.xml

APIKEY="syncthing-transfer-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
read -r GUI_A GUI_B LISTEN_A LISTEN_B < <(helper free-ports 4)
mkdir -p "$TMP/staging" "$TMP/a/folder/.stfolder" "$TMP/b/folder/.stfolder"

for n in a b; do
    # `syncthing generate` (1.19's subcommand; the old `-generate=DIR` flag
    # lives on as `serve --generate`): key, certificate and a default config.
    timeout "$TIMEOUT" syncthing generate --home="$TMP/$n/home" --no-default-folder >"$TMP/generate-$n.log" 2>&1 \
        || { cat "$TMP/generate-$n.log" >&2; exit 1; }
done
ID_A=$(timeout "$TIMEOUT" syncthing serve --home="$TMP/a/home" --device-id)
ID_B=$(timeout "$TIMEOUT" syncthing serve --home="$TMP/b/home" --device-id)
[ -n "$ID_A" ] && [ -n "$ID_B" ] && [ "$ID_A" != "$ID_B" ] || { echo "could not read two device IDs" >&2; exit 1; }
log "a: $ID_A (REST 127.0.0.1:$GUI_A, sync tcp://127.0.0.1:$LISTEN_A)"
log "b: $ID_B (REST 127.0.0.1:$GUI_B, sync tcp://127.0.0.1:$LISTEN_B)"

helper configure "$TMP/a/home/config.xml" "$ID_A" "$ID_B" b "$GUI_A" "$LISTEN_A" "$LISTEN_B" \
    "$APIKEY" "$FOLDER_ID" "$TMP/a/folder" "$WATCHER" "$WATCHER_DELAY" "$RESCAN_S"
helper configure "$TMP/b/home/config.xml" "$ID_B" "$ID_A" a "$GUI_B" "$LISTEN_B" "$LISTEN_A" \
    "$APIKEY" "$FOLDER_ID" "$TMP/b/folder" "$WATCHER" "$WATCHER_DELAY" "$RESCAN_S"

# --------------------------------------------------------------- 4. start

# 1.19 forks a monitor process and runs the daemon as its child even with
# --no-restart; STMONITORED=1 tells it it already is that child, so the pid we
# hold is the daemon itself. setsid gives it its own process group (pgid = its
# pid), which cleanup signals as a whole in case anything is forked anyway.
start_daemon() {  # start_daemon NAME
    STMONITORED=1 STNOUPGRADE=1 STNORESTART=1 setsid syncthing serve --home="$TMP/$1/home" \
        --no-browser --no-restart --no-upgrade --no-default-folder --logflags=3 \
        >"$TMP/$1.log" 2>&1 </dev/null &
    PIDS+=("$!")
    log "started syncthing $1 (pid $!)"
}

# a first, and b once a listens, so b's first dial reaches a at once.
start_daemon a
helper wait-api "$GUI_A" "$APIKEY" "$TIMEOUT"
start_daemon b
CONN=$(helper wait-ready "$GUI_A" "$GUI_B" "$APIKEY" "$ID_A" "$ID_B" "$FOLDER_ID" "$TIMEOUT")
log "connected: $CONN"

# ---------------------------------------------------------------- 5. runs

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
RESULTS=()
for i in $(seq 1 "$RUNS"); do
    name="bench-$i-$(od -An -tx1 -N4 /dev/urandom | tr -d ' \n').bin"
    r=$(helper measure "$GUI_A" "$GUI_B" "$APIKEY" "$ID_B" "$FOLDER_ID" "$TMP/staging" \
        "$TMP/a/folder" "$TMP/b/folder" "$name" "$SIZE_BYTES" "$MODE" "$PLACE" "$TIMEOUT")
    log "run $i/$RUNS: $r"
    RESULTS+=("$r")
done

# -------------------------------------------------------------- 6. results

META=$(python3 -c 'import json, sys; a = sys.argv[1:]; print(json.dumps({
    "tool": "syncthing", "syncthing_version": a[0], "mode": a[1],
    "fs_watcher": a[2] == "on", "fs_watcher_delay_s": int(a[3]), "place": a[4],
    "file_size_bytes": int(a[5]), "file_size_mib": int(a[6]), "runs_count": int(a[7]),
    "nproc": int(a[8]), "cpu": a[12], "rescan_interval_s": int(a[9]), "fsync": True,
    "connection": json.loads(a[10]), "loadavg_start": a[11].split()}))' \
    "$ST_VERSION" "$MODE" "$WATCHER" "$WATCHER_DELAY" "$PLACE" "$SIZE_BYTES" "$SIZE_MIB" \
    "$RUNS" "$(nproc)" "$RESCAN_S" "$CONN" "$LOADAVG_START" \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)")

if [ "$JSON" -eq 1 ]; then
    helper summarize json "$META" "${RESULTS[@]}"
else
    helper summarize text "$META" "${RESULTS[@]}"
fi
