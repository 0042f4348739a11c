#!/usr/bin/env bash
# Audits the help text the man pages are generated from: every command shown
# in help should have an abstract and an example (a line starting with the
# program's name in its discussion, as "Examples:" blocks have), and every
# argument, option and flag shown should have help text. Reads each binary's
# `--experimental-dump-help` (swift-argument-parser's description of its
# commands) and prints what lacks either.
#
#   bash packaging/audit-help.sh [--strict] BINARY...
#
# Exits 0 after printing the list; with --strict, exits 1 when the list is
# not empty. The parser's own `help` command and --help/--version flags are
# not counted (their text is the library's).
set -euo pipefail
strict=no
if [ "${1:-}" = "--strict" ]; then
    strict=yes
    shift
fi
if [ $# -eq 0 ]; then
    echo "usage: bash packaging/audit-help.sh [--strict] BINARY..." >&2
    exit 64
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for binary in "$@"; do
    "$binary" --experimental-dump-help > "$work/$(basename "$binary").json"
done
python3 - "$strict" "$work"/*.json <<'PY'
import json, re, sys

strict, files = sys.argv[1] == "yes", sys.argv[2:]
missing = []


def audit(command, path):
    name = " ".join(path)
    if not command.get("shouldDisplay", True) or command["commandName"] == "help":
        return
    if not command.get("abstract"):
        missing.append(f"{name}: no abstract")
    subcommands = [c for c in command.get("subcommands") or [] if c["commandName"] != "help"]
    # A command that only groups others is shown by their examples.
    if not subcommands:
        discussion = command.get("discussion") or ""
        if not re.search(rf"^\s*(\$ )?{re.escape(path[0])}\b", discussion, re.MULTILINE):
            missing.append(f"{name}: no example")
    for argument in command.get("arguments") or []:
        if not argument.get("shouldDisplay", True):
            continue
        spelled = argument.get("preferredName", {}).get("name") or argument.get("valueName")
        if spelled in ("help", "version", "h"):
            continue
        if not (argument.get("abstract") or "").strip():
            kind = {"positional": "argument", "option": "option", "flag": "flag"}[argument["kind"]]
            shown = spelled.upper() if argument["kind"] == "positional" else "--" + spelled
            missing.append(f"{name}: {kind} {shown} has no help")
    for subcommand in subcommands:
        audit(subcommand, path + [subcommand["commandName"]])


for file in files:
    root = json.load(open(file))["command"]
    audit(root, [root["commandName"]])

for line in missing:
    print(line)
print(f"help audit: {len(missing)} missing" + (" (see above)" if missing else ""), file=sys.stderr)
sys.exit(1 if strict and missing else 0)
PY
