#!/usr/bin/env python3
"""Makes a 120-shot project (3 scenes x 40 shots, 50 strokes of 80 points per shot) on daemon A
through the control API, then times `storyteller export package` on A and `storyteller import` on a fresh B."""
import http.client, json, socket, subprocess, sys, time, random, os

class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("storyteller", timeout=600)
        self.path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)

def call(sock, method, target, body=None):
    c = UnixHTTP(sock)
    c.request(method, target, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status >= 300:
        raise SystemExit(f"{method} {target}: {r.status} {data[:300]}")
    return json.loads(data) if data else None

cli, sock_a, out = sys.argv[1:4]
socks_b = sys.argv[4:]
rng = random.Random(1)
project = call(sock_a, "POST", "/v1/projects", {"name": "Bench 120"})["id"]
for scene in range(3):
    ops = [{"op": "scene.add", "title": f"Scene {scene+1}"}]
    call(sock_a, "POST", f"/v1/projects/{project}/edits", {"ops": ops})
shown = call(sock_a, "GET", f"/v1/projects/{project}?points=false")
scenes = [s["id"] for s in shown["scenes"]]
for scene in scenes:
    for shot in range(40):
        ops = [{"op": "shot.add", "scene": scene}, {"op": "layer.add", "shot": "$0", "name": "ink"}]
        for _ in range(50):
            x, y = rng.random(), rng.random()
            points = []
            for _ in range(80):
                x = min(1, max(0, x + rng.uniform(-0.01, 0.01))); y = min(1, max(0, y + rng.uniform(-0.01, 0.01)))
                points += [round(x, 4), round(y, 4), round(rng.uniform(0.3, 1), 3)]
            ops.append({"op": "stroke.add", "layer": "$1", "points": points})
        call(sock_a, "POST", f"/v1/projects/{project}/edits", {"ops": ops})
for run in range(3):
    path = f"{out}.{run}"
    if os.path.exists(path): os.unlink(path)
    t = time.monotonic(); subprocess.run([cli, "export", "package", project, "--out", path, "--socket", sock_a], check=True, capture_output=True)
    e = time.monotonic() - t
    print(f"export run {run}: {e:.2f} s, {os.path.getsize(path)} bytes")
for run, sock_b in enumerate(socks_b):
    t = time.monotonic(); r = subprocess.run([cli, "import", f"{out}.{run}", "--socket", sock_b], check=True, capture_output=True, text=True)
    e = time.monotonic() - t
    print(f"import (new) run {run}: {e:.2f} s: {r.stdout.strip()}")
t = time.monotonic(); r = subprocess.run([cli, "import", f"{out}.0", "--socket", sock_a], check=True, capture_output=True, text=True)
print(f"import (merge into the exporter, nothing new): {time.monotonic() - t:.2f} s: {r.stdout.strip()}")
