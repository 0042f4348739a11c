#!/usr/bin/env bash
# Checks the units with systemd-analyze (verify, and the security exposure of
# the system unit, which must stay at or below 2.0). ExecStart is pointed at
# /bin/true because the daemon is not installed where the units expect it,
# and the man page in Documentation= is not looked up (--man=no) for the same
# reason (packaging/check-deb.sh checks that the package holds it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for unit in storytellerd.service storytellerd.user.service; do
    sed -e 's#^ExecStart=[^ ]*#ExecStart=/bin/true#' "$here/$unit" > "$work/$unit"
done
systemd-analyze verify --man=no "$work/storytellerd.service" "$work/storytellerd.user.service"
report=$(systemd-analyze security --offline=true "$work/storytellerd.service")
exposure=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for storytellerd.service: \([0-9.]*\).*/\1/p')
echo "storytellerd.service: systemd-analyze verify clean, exposure $exposure"
awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 2.0) }' || { echo "exposure $exposure is above 2.0" >&2; exit 1; }
