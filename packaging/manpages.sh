#!/usr/bin/env bash
# Generates the man pages storyteller(1) and storytellerd(8) from the
# argument parser, with swift-argument-parser's generate-manual plugin (which
# builds the package in debug mode and runs each binary's
# --experimental-dump-help), then adds what the parser does not know:
# ENVIRONMENT, FILES and SEE ALSO (packaging/man/*.mdoc).
#
#   bash packaging/manpages.sh OUTDIR [DATE [VERSION]]
#
# DATE (yyyy-mm-dd, default today) is the pages' date, VERSION (default the
# one in Sources/StoryAPI/Version.swift) is named in their footer.
#
# Changed in what the generator writes: a discussion's blank lines (empty
# input lines, which mdoc warns about) become paragraph breaks, indented
# examples literal displays instead of text to be filled, and each sentence
# starts a line (roff's rule, so it spaces sentences right); the daemon's
# page loses the `help` subcommand the parser adds (`storytellerd help` only
# prints --help) and with it "subcommand" in its synopsis.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
    echo "usage: bash packaging/manpages.sh OUTDIR [DATE [VERSION]]" >&2
    exit 64
fi
out=$1
date=${2:-$(date -u +%Y-%m-%d)}
version=${3:-$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/StoryAPI/Version.swift)}
mkdir -p "$out"

generated=.build/plugins/GenerateManual/outputs
rm -rf "$generated"
# The plugin takes one section for every executable, so it runs once per
# section (the second run builds nothing).
for section in 1 8; do
    swift package plugin generate-manual --configuration debug --section "$section" --date "$date" >&2
done

finish() {
    local page=$1 extra=$2 target=$3 drop_help=$4
    [ -f "$page" ] || { echo "manpages: the generator made no $page" >&2; exit 1; }
    awk -v extra="$extra" -v os="Storyteller $version" -v drop_help="$drop_help" '
        function close_literal() { if (literal) { print ".Ed"; literal = 0 } }
        function sentence_lines(text,    lines) {
            while (match(text, /[A-Za-z0-9)][.!?] +[A-Z]/)) {
                lines = lines substr(text, 1, RSTART + 1) "\n"
                text = substr(text, RSTART + RLENGTH - 1)
            }
            return lines text
        }
        BEGIN {
            part = "before"
            while ((getline line < extra) > 0) {
                if (line == ".\\\" after EXIT STATUS") { part = "after"; continue }
                if (line ~ /^\.\\"/) continue
                sections[part] = sections[part] line "\n"
            }
        }
        /^\.Os$/ { print ".Os \"" os "\""; next }
        drop_help && /^\.Sh SYNOPSIS/ { synopsis = 1 }
        drop_help && synopsis && /^\.Ar subcommand$/ { synopsis = 0; next }
        drop_help && /^\.It Em help$/ { skipping = 1 }
        skipping { if (/^\.El$/) skipping = 0; next }
        /^$/ { close_literal(); print ".Pp"; next }
        /^  / {
            if (!literal) { print ".Bd -literal -offset indent"; literal = 1 }
            text = substr($0, 3)
            if (text ~ /^[.\047]/) text = "\\&" text
            print text
            next
        }
        { close_literal() }
        /^\.Sh "EXIT STATUS"/ { printf "%s", sections["before"] }
        !/^\./ { $0 = sentence_lines($0) }
        { print }
        END { close_literal(); printf "%s", sections["after"] }
    ' "$page" > "$target"
}
finish "$generated/storyteller/storyteller.1" packaging/man/storyteller.1.mdoc "$out/storyteller.1" 0
finish "$generated/storytellerd/storytellerd.8" packaging/man/storytellerd.8.mdoc "$out/storytellerd.8" 1
echo "manpages: $out/storyteller.1 $out/storytellerd.8" >&2
