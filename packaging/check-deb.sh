#!/usr/bin/env bash
# Checks a Storyteller Debian package (packaging/build-deb.sh makes it):
#
#   1. its control data (dpkg-deb --info): name, version, architecture,
#      dependencies (glibc, libsqlite3, OpenSSL 3, the renderer's cairo,
#      libjpeg-turbo and libwebp, and nothing else), conffile,
#      maintainer scripts;
#   2. its contents (dpkg-deb --contents): every expected path with its mode,
#      owned by root, nothing elsewhere; the units are the repository's;
#   3. lintian, when installed: fails on errors and warnings that
#      packaging/debian/lintian-overrides does not explain;
#   4. an install into a throwaway root (dpkg --root, maintainer scripts run
#      with DPKG_ROOT): the user and state directory are made there, the
#      installed binaries need only the allowed libraries (ldd, readelf),
#      answer --version and --help, read the installed config file, report a
#      bad one (toml++'s C++ exceptions in the static binary), and the daemon
#      starts, serves the CLI, renders a panel to PNG and PDF and a print sheet, and stops
#      cleanly on SIGTERM; the man pages
#      render without warnings (man, and mandoc -T lint when installed); the
#      completion scripts parse; an upgrade keeps an edited conffile; a purge
#      removes the files and keeps the state directory;
#   5. as root: a root holding only the package and the libraries ldd names,
#      where the binaries run and the daemon serves the CLI and renders (chroot).
#
#   bash packaging/check-deb.sh [DEB]     (default: the newest dist/storyteller_*.deb)
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls -t dist/storyteller_*.deb 2>/dev/null | head -n 1 || true)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "check-deb: no package given and none in dist/ (bash packaging/build-deb.sh)" >&2; exit 64; }

failures=0
fail() {
    echo "check-deb: FAIL: $*" >&2
    failures=$((failures + 1))
}
pass() { echo "check-deb: ok: $*"; }

work=$(mktemp -d)
daemon_pid=""
mounted=""
cleanup() {
    if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
    if [ -n "$mounted" ]; then umount "$mounted" || { echo "check-deb: could not unmount $mounted; $work left in place" >&2; return; }; fi
    rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# --- 1. control data -----------------------------------------------------
field() { dpkg-deb --field "$deb" "$1"; }
changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
[ "$(field Package)" = storyteller ] && pass "Package: storyteller" || fail "Package is '$(field Package)'"
[ "$(field Version)" = "$changelog_version" ] && pass "Version: $changelog_version" ||
    fail "Version is '$(field Version)', packaging/debian/changelog says $changelog_version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] && pass "Architecture: $(field Architecture)" ||
    fail "Architecture is '$(field Architecture)'"
[[ "$(field Installed-Size)" =~ ^[0-9]+$ ]] && pass "Installed-Size: $(field Installed-Size) KiB" || fail "Installed-Size is '$(field Installed-Size)'"
depends=$(field Depends)
depended=$(printf '%s\n' "$depends" | tr ',' '\n' | sed -e 's/(.*)//' -e 's/[[:space:]]//g' | sort | tr '\n' ' ')
[ "$depended" = "libc6 libcairo2 libgcc-s1 libglib2.0-0 libjpeg62-turbo libpango-1.0-0 libpangocairo-1.0-0 libsqlite3-0 libssl3 libwebp7 zlib1g " ] && pass "Depends: $depends" ||
    fail "Depends is '$depends'; expected libc6, libgcc-s1 (which libc6 needs too), libsqlite3-0, libssl3 and the renderer's libcairo2, libpango-1.0-0, libpangocairo-1.0-0, libglib2.0-0, libjpeg62-turbo and libwebp7, and zlib1g (project packages are zip files) only"
# Fonts are recommended, not depended on: without them the sheets' text is boxes, nothing fails.
# DejaVu is the text's font; a CJK one is the fallback for Chinese, Japanese and Korean.
# ffmpeg encodes animatics (a child process, never linked): recommended too.
recommends=$(field Recommends)
[ "$recommends" = "fonts-dejavu-core, fonts-wqy-microhei | fonts-noto-cjk | fonts-droid-fallback, ffmpeg" ] && pass "Recommends: $recommends" ||
    fail "Recommends is '$recommends'; expected fonts-dejavu-core and a CJK font (fonts-wqy-microhei | fonts-noto-cjk | fonts-droid-fallback), and ffmpeg (animatics)"
dpkg-deb --control "$deb" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/storyteller/storytellerd.toml ] && pass "conffile /etc/storyteller/storytellerd.toml" ||
    fail "conffiles is '$(cat "$work/control/conffiles")'"
for script in postinst prerm postrm; do
    if [ -x "$work/control/$script" ] && sh -n "$work/control/$script"; then pass "$script: executable, parses"; else fail "$script missing, not executable or not sh"; fi
done
[ -s "$work/control/md5sums" ] && pass "md5sums" || fail "no md5sums"

# --- 2. contents ---------------------------------------------------------
dpkg-deb --contents "$deb" > "$work/contents"
expected=(
    "-rwxr-xr-x ./usr/bin/storytellerd"
    "-rwxr-xr-x ./usr/bin/storyteller"
    "-rw-r--r-- ./usr/lib/systemd/system/storytellerd.service"
    "-rw-r--r-- ./usr/lib/systemd/user/storytellerd.service"
    "-rw-r--r-- ./usr/lib/sysusers.d/storyteller.conf"
    "-rw-r--r-- ./usr/lib/tmpfiles.d/storyteller.conf"
    "-rw-r--r-- ./etc/storyteller/storytellerd.toml"
    "-rw-r--r-- ./usr/share/man/man1/storyteller.1.gz"
    "-rw-r--r-- ./usr/share/man/man8/storytellerd.8.gz"
    "-rw-r--r-- ./usr/share/bash-completion/completions/storyteller"
    "-rw-r--r-- ./usr/share/bash-completion/completions/storytellerd"
    "-rw-r--r-- ./usr/share/zsh/vendor-completions/_storyteller"
    "-rw-r--r-- ./usr/share/zsh/vendor-completions/_storytellerd"
    "-rw-r--r-- ./usr/share/fish/vendor_completions.d/storyteller.fish"
    "-rw-r--r-- ./usr/share/fish/vendor_completions.d/storytellerd.fish"
    "-rw-r--r-- ./usr/share/doc/storyteller/copyright"
    "-rw-r--r-- ./usr/share/doc/storyteller/changelog.Debian.gz"
    "-rw-r--r-- ./usr/share/doc/storyteller/README.md"
)
for doc in docs/*.md docs/openapi.json; do expected+=("-rw-r--r-- ./usr/share/doc/storyteller/$doc"); done
for entry in "${expected[@]}"; do
    mode=${entry%% *}
    path=${entry#* }
    line=$(awk -v p="$path" '$6 == p' "$work/contents")
    if [ -z "$line" ]; then
        fail "$path is not in the package"
    elif [ "$(awk '{ print $1 " " $2 }' <<< "$line")" != "$mode root/root" ]; then
        fail "$path is $(awk '{ print $1 " " $2 }' <<< "$line"), expected $mode root/root"
    fi
done
pass "${#expected[@]} expected paths with their modes, owned by root"
strays=$(awk '$1 !~ /^d/ { print $6 }' "$work/contents" | grep -Ev '^\./(usr/bin|usr/lib/systemd/(system|user)|usr/lib/(sysusers|tmpfiles)\.d|usr/share/(man|bash-completion|zsh|fish|doc/storyteller|lintian/overrides)|etc/storyteller)/' || true)
[ -z "$strays" ] && pass "nothing outside the expected directories" || fail "unexpected paths: $(echo $strays)"
not_root=$(awk '$2 != "root/root"' "$work/contents")
[ -z "$not_root" ] && pass "every entry owned by root/root" || fail "entries not owned by root: $not_root"

# --- 3. lintian ----------------------------------------------------------
if command -v lintian >/dev/null; then
    root_flag=()
    [ "$(id -u)" -eq 0 ] && root_flag=(--allow-root)
    if lintian "${root_flag[@]}" --pedantic --fail-on error,warning "$deb" > "$work/lintian" 2>&1; then
        pass "lintian: no error or warning beyond the explained overrides ($(grep -c '' "$work/lintian") other lines)"
    else
        fail "lintian:"
    fi
    sed 's/^/    lintian: /' "$work/lintian"
else
    echo "check-deb: lintian is not installed; skipped"
fi

# --- 4. installed into a throwaway root ------------------------------------
target="$work/root"
mkdir -p "$target/var/lib/dpkg/info" "$target/var/lib/dpkg/updates" "$target/var/log"
touch "$target/var/lib/dpkg/status"
dpkg_root=(dpkg --root="$target" --force-not-root --force-script-chrootless --log=/dev/null)
# Dependencies are the host's (the binaries run with its libraries).
if "${dpkg_root[@]}" --force-depends --install "$deb" > "$work/install.log" 2>&1; then
    pass "installed into a throwaway root (dpkg --root, scripts with DPKG_ROOT)"
else
    fail "dpkg --install into $target:"
    cat "$work/install.log" >&2
fi
status=$(dpkg-query --root="$target" -W -f='${Status}' storyteller 2>/dev/null || true)
[ "$status" = "install ok installed" ] && pass "dpkg status: $status" || fail "dpkg status is '$status'"
if command -v systemd-sysusers >/dev/null; then
    grep -q '^storyteller:' "$target/etc/passwd" && pass "postinst made the user storyteller (systemd-sysusers --root)" ||
        fail "postinst did not make the user storyteller in $target/etc/passwd"
fi
if command -v systemd-tmpfiles >/dev/null && [ "$(id -u)" -eq 0 ]; then
    uid=$(awk -F: '$1 == "storyteller" { print $3 }' "$target/etc/passwd" 2>/dev/null || true)
    state=$(stat -c '%a %u' "$target/var/lib/storyteller" 2>/dev/null || true)
    [ -n "$uid" ] && [ "$state" = "700 $uid" ] && pass "postinst made /var/lib/storyteller (0700, the storyteller user's)" ||
        fail "/var/lib/storyteller is '$state' (mode, uid), expected '700 $uid'"
fi

upstream=${changelog_version%-*}
# glibc's (with libgcc_s, which glibc loads itself), libsqlite3's, OpenSSL's;
# for the daemon also its renderer's: cairo, libjpeg-turbo and libwebp, and
# what Debian's cairo 1.16 links (pixman, libpng and zlib; fontconfig,
# freetype, expat and brotli for text; the X11/XCB libraries of its xlib and
# xcb surfaces, unused here, with libbsd and libmd under libXdmcp); pango
# and what it links (glib, gio, harfbuzz, fribidi, libthai).
common='linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libgcc_s\.so\.1|libssl\.so\.3|libcrypto\.so\.3|libsqlite3\.so\.0'
renderer='libcairo\.so\.2|libjpeg\.so\.62|libwebp\.so\.7|libpixman-1\.so\.0|libpng16\.so\.16|libz\.so\.1|libfontconfig\.so\.1|libfreetype\.so\.6|libexpat\.so\.1|libbrotlidec\.so\.1|libbrotlicommon\.so\.1|libX11\.so\.6|libXext\.so\.6|libXrender\.so\.1|libxcb\.so\.1|libxcb-render\.so\.0|libxcb-shm\.so\.0|libXau\.so\.6|libXdmcp\.so\.6|libbsd\.so\.0|libmd\.so\.0|libpangocairo-1\.0\.so\.0|libpango-1\.0\.so\.0|libpangoft2-1\.0\.so\.0|libgobject-2\.0\.so\.0|libglib-2\.0\.so\.0|libgio-2\.0\.so\.0|libgmodule-2\.0\.so\.0|libharfbuzz\.so\.0|libgraphite2\.so\.3|libfribidi\.so\.0|libthai\.so\.0|libdatrie\.so\.1|libffi\.so\.8|libpcre2-8\.so\.0|libmount\.so\.1|libblkid\.so\.1|libselinux\.so\.1'
for product in storytellerd storyteller; do
    binary="$target/usr/bin/$product"
    allowed="^($common)\$"
    what="glibc (and libgcc_s), libsqlite3 and OpenSSL"
    if [ "$product" = storytellerd ]; then
        allowed="^($common|$renderer)\$"
        what="$what, and cairo's, libjpeg's and libwebp's"
    fi
    libraries=$(ldd "$binary" | awk '{ print $1 }' | sed 's#.*/##')
    echo "check-deb: ldd $product: $(echo $libraries)"
    unexpected=$(printf '%s\n' "$libraries" | grep -Ev "$allowed" || true)
    [ -z "$unexpected" ] && pass "$product needs nothing beyond $what" || fail "$product needs $(echo $unexpected)"
    ! ldd "$binary" | grep -q 'not found' || fail "$product: a library is not found"
    readelf -d "$binary" | grep -Eq '\((RPATH|RUNPATH)\)' && fail "$product has an RPATH/RUNPATH" || pass "$product has no RPATH/RUNPATH"
    readelf -d "$binary" | grep -q 'BIND_NOW' && pass "$product is linked with -z now" || fail "$product lacks BIND_NOW"
    said=$("$binary" --version)
    [ "$said" = "$product $upstream" ] && pass "$product --version: $said" || fail "$product --version says '$said'"
    shown=--config
    [ "$product" = storyteller ] && shown=SUBCOMMANDS
    "$binary" --help > "$work/$product.help" 2>&1 && grep -q -- "$shown" "$work/$product.help" &&
        pass "$product --help" || fail "$product --help failed or lacks $shown: $(head -n 3 "$work/$product.help")"
done

# The installed config file sets nothing (every key commented out).
if "$target/usr/bin/storytellerd" --config "$target/etc/storyteller/storytellerd.toml" --data-dir "$work/state" --print-config > "$work/print-config" 2>&1; then
    set_by_file=$(grep -v '# default$' "$work/print-config" | grep -v '^data-dir = .*# --data-dir$' || true)
    [ -z "$set_by_file" ] && pass "the installed storytellerd.toml parses and leaves every default" ||
        fail "the installed storytellerd.toml sets: $set_by_file"
else
    fail "storytellerd --print-config with the installed config: $(cat "$work/print-config")"
fi
# The system unit names the file; a missing one is a configuration error
# (exit 78, which the unit does not retry), not a silent run on defaults.
code=0
"$target/usr/bin/storytellerd" --config "$work/missing.toml" --print-config > "$work/missing.out" 2>&1 || code=$?
[ "$code" = 78 ] && grep -q 'missing.toml' "$work/missing.out" && pass "a missing config file: exit 78, named" ||
    fail "a missing config file: exit $code, $(cat "$work/missing.out")"
printf 'listen = "127.0.0.1:7460"\nname = [\n' > "$work/bad.toml"
code=0
"$target/usr/bin/storytellerd" --config "$work/bad.toml" --print-config > "$work/bad.out" 2>&1 || code=$?
[ "$code" = 78 ] && grep -q 'bad.toml:2' "$work/bad.out" && pass "a bad config file: exit 78, its line named" ||
    fail "a bad config file: exit $code, $(cat "$work/bad.out")"

# Draws a shot through the CLI and renders it to OUT/panel.png and OUT/panel.pdf
# (OUT as the CLI sees it); the rest of the arguments run the CLI.
render_panel() {
    local out=$1
    shift
    local project scene shot layer
    project=$("$@" projects create "Render check") && scene=$("$@" scenes add "$project") &&
        shot=$("$@" shots add "$project" "$scene") && layer=$("$@" layers add "$project" "$shot") &&
        "$@" strokes add "$project" "$layer" --points "[0.1,0.1,0.2,0.9,0.9,1]" > /dev/null &&
        "$@" render "$project" "$shot" --out "$out/panel.png" > /dev/null &&
        "$@" render "$project" "$shot" --out "$out/panel.pdf" --onion 1 > /dev/null &&
        "$@" export pdf "$project" --out "$out/sheet.pdf" > /dev/null
}
# Whether DIR/panel.png, DIR/panel.pdf and DIR/sheet.pdf begin as a PNG and a PDF do.
rendered_files() {
    [ "$(head -c 8 "$1/panel.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$(head -c 5 "$1/panel.pdf")" = "%PDF-" ] &&
        [ "$(head -c 5 "$1/sheet.pdf")" = "%PDF-" ]
}

# The installed daemon starts, the installed CLI talks to it, SIGTERM stops it.
"$target/usr/bin/storytellerd" --data-dir "$work/state" --socket "$work/control.sock" --listen 127.0.0.1:0 \
    --log-level warning > "$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 200); do [ -S "$work/control.sock" ] && break; sleep 0.05; done
if "$target/usr/bin/storyteller" --socket "$work/control.sock" version > "$work/version" 2>&1 && grep -q "$upstream" "$work/version"; then
    pass "the installed daemon runs and the CLI reaches it: $(tr '\n' ' ' < "$work/version")"
else
    fail "storyteller version against the installed daemon: $(cat "$work/version") / daemon: $(cat "$work/daemon.log")"
fi
mkdir -p "$work/panels"
if render_panel "$work/panels" "$target/usr/bin/storyteller" --socket "$work/control.sock" > "$work/render" 2>&1 &&
    rendered_files "$work/panels"; then
    pass "the installed daemon renders a panel to PNG and PDF, and a print sheet"
else
    fail "rendering with the installed daemon: $(cat "$work/render") / daemon: $(cat "$work/daemon.log")"
fi
kill -TERM "$daemon_pid"
code=0
wait "$daemon_pid" || code=$?
daemon_pid=""
[ "$code" = 0 ] && pass "the daemon stops on SIGTERM with exit 0" || fail "the daemon exited $code on SIGTERM: $(cat "$work/daemon.log")"

# A root holding nothing but the package and the libraries ldd names (and
# /proc): the binaries need nothing else at run time, not even what they
# might load by name (glibc loads libgcc_s at pthread_exit). Needs root for
# chroot and the bind mount of /proc; skipped otherwise.
bare="$work/bare"
if [ "$(id -u)" -eq 0 ] && command -v chroot >/dev/null; then
    dpkg-deb -x "$deb" "$bare"
    for library in $(ldd "$bare/usr/bin/storytellerd" "$bare/usr/bin/storyteller" | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
        install -D -m 0755 "$library" "$bare$library"
    done
    mkdir -p "$bare/proc" "$bare/tmp"
    if mount --bind /proc "$bare/proc" 2>/dev/null; then
        mounted="$bare/proc"
        said=$(chroot "$bare" /usr/bin/storytellerd --version 2>&1) && [ "$said" = "storytellerd $upstream" ] &&
            said=$(chroot "$bare" /usr/bin/storyteller --version 2>&1) && [ "$said" = "storyteller $upstream" ] &&
            pass "in a root with only $(cd "$bare" && find . -name '*.so*' -printf '%f\n' | sort | tr '\n' ' '): --version" ||
            fail "in a root with only the libraries ldd names: $said"
        chroot "$bare" /usr/bin/storytellerd --data-dir /tmp/state --socket /tmp/control.sock --listen 127.0.0.1:0 \
            --log-level warning > "$work/bare-daemon.log" 2>&1 &
        daemon_pid=$!
        for _ in $(seq 1 200); do [ -S "$bare/tmp/control.sock" ] && break; sleep 0.05; done
        chroot "$bare" /usr/bin/storyteller --socket /tmp/control.sock projects create "Night Train" > "$work/bare-cli" 2>&1 &&
            chroot "$bare" /usr/bin/storyteller --socket /tmp/control.sock projects >> "$work/bare-cli" 2>&1 &&
            grep -q "Night Train" "$work/bare-cli" && pass "in that root the daemon serves the CLI (a project made and listed)" ||
            fail "in that root: $(cat "$work/bare-cli") / daemon: $(cat "$work/bare-daemon.log")"
        # cairo, libjpeg and libwebp load nothing by name either (no fonts are drawn, so none are needed).
        render_panel /tmp chroot "$bare" /usr/bin/storyteller --socket /tmp/control.sock > "$work/bare-render" 2>&1 &&
            rendered_files "$bare/tmp" && pass "in that root the daemon renders a panel to PNG and PDF, and a print sheet" ||
            fail "rendering in that root: $(cat "$work/bare-render") / daemon: $(cat "$work/bare-daemon.log")"
        kill -TERM "$daemon_pid"
        code=0
        wait "$daemon_pid" || code=$?
        daemon_pid=""
        [ "$code" = 0 ] && pass "in that root the daemon stops on SIGTERM with exit 0" || fail "in that root the daemon exited $code: $(cat "$work/bare-daemon.log")"
        umount "$mounted" && mounted=""
    else
        echo "check-deb: cannot bind-mount /proc here; the bare-root run is skipped"
    fi
else
    echo "check-deb: not root; the bare-root run is skipped"
fi

# Man pages render without warnings (what lintian's groff-message checks).
for page in usr/share/man/man1/storyteller.1.gz usr/share/man/man8/storytellerd.8.gz; do
    messages=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$target/$page" 2>&1 >/dev/null || echo "man failed")
    [ -z "$messages" ] && pass "man -l $page renders without warnings" || fail "man -l $page: $messages"
    lines=$(MANWIDTH=80 man -l "$target/$page" 2>/dev/null | wc -l)
    [ "$lines" -gt 40 ] && pass "$page: $lines lines" || fail "$page renders only $lines lines"
    if command -v mandoc >/dev/null; then
        zcat "$target/$page" > "$work/page"
        lint=$(mandoc -T lint -W warning "$work/page" 2>&1 || true)
        [ -z "$lint" ] || echo "check-deb: mandoc -T lint $page: $lint"
        mandoc -T lint -W error "$work/page" > /dev/null 2>&1 && pass "mandoc -T lint $page: no errors" || fail "mandoc -T lint $page found errors"
    fi
done

# What the man pages lack (a report: the help text is the commands' own).
echo "check-deb: help audit of the installed binaries (every command an example, every argument help):"
bash packaging/audit-help.sh "$target/usr/bin/storyteller" "$target/usr/bin/storytellerd" 2>&1 | sed 's/^/    /' || true

bash -n "$target/usr/share/bash-completion/completions/storyteller" && bash -n "$target/usr/share/bash-completion/completions/storytellerd" &&
    pass "bash completions parse" || fail "a bash completion does not parse"
for shell in zsh fish; do
    if command -v "$shell" >/dev/null; then
        case $shell in
        zsh) files=("$target"/usr/share/zsh/vendor-completions/_storyteller*) ;;
        fish) files=("$target"/usr/share/fish/vendor_completions.d/storyteller*.fish) ;;
        esac
        for file in "${files[@]}"; do "$shell" -n "$file" || fail "$file does not parse"; done
        pass "$shell completions parse"
    fi
done

# The units are the repository's, and what they name is installed.
cmp -s systemd/storytellerd.service "$target/usr/lib/systemd/system/storytellerd.service" &&
    cmp -s systemd/storytellerd.user.service "$target/usr/lib/systemd/user/storytellerd.service" &&
    pass "the units are systemd/'s" || fail "the installed units differ from systemd/"
for unit in usr/lib/systemd/system/storytellerd.service usr/lib/systemd/user/storytellerd.service; do
    executable=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$target/$unit")
    [ -x "$target$executable" ] && pass "$unit: ExecStart $executable is installed" || fail "$unit: ExecStart $executable is not in the package"
    for document in $(sed -n 's/^Documentation=//p' "$target/$unit"); do
        case $document in
        man:*) page=${document#man:}; name=${page%(*}; section=${page#*(}; section=${section%)}
            [ -f "$target/usr/share/man/man$section/$name.$section.gz" ] || fail "$unit: $document is not installed" ;;
        file:*) [ -f "$target${document#file:}" ] || fail "$unit: $document is not installed" ;;
        esac
    done
    pass "$unit: Documentation= $(sed -n 's/^Documentation=//p' "$target/$unit") (checked that each is installed)"
done
# The system unit's command line, with the directories systemd would give it
# (ConfigurationDirectory=, StateDirectory=, RuntimeDirectory=) in the
# throwaway root: the config file is read, the state and the socket are where
# the sandbox lets the daemon write and where the CLI looks for the system
# daemon.
system_unit="$target/usr/lib/systemd/system/storytellerd.service"
grep -q '^ConfigurationDirectory=storyteller$' "$system_unit" || fail "the system unit has no ConfigurationDirectory=storyteller"
command_line=$(sed -n 's/^ExecStart=//p' "$system_unit")
command_line=${command_line//'${CONFIGURATION_DIRECTORY}'/$target/etc/storyteller}
command_line=${command_line//'${STATE_DIRECTORY}'/$work/unit-state}
command_line=${command_line//'${RUNTIME_DIRECTORY}'/$work/unit-run}
read -r -a unit_arguments <<< "$command_line"
if "$target${unit_arguments[0]}" "${unit_arguments[@]:1}" --print-config > "$work/unit-config" 2>&1; then
    grep -q "^data-dir = \"$work/unit-state\"  # --data-dir$" "$work/unit-config" &&
        grep -q "^socket = \"$work/unit-run/control.sock\"  # --socket$" "$work/unit-config" &&
        pass "the system unit's ExecStart reads /etc/storyteller/storytellerd.toml, state in \$STATE_DIRECTORY, socket in \$RUNTIME_DIRECTORY" ||
        fail "the system unit's ExecStart gives: $(cat "$work/unit-config")"
else
    fail "the system unit's ExecStart with --print-config: $(cat "$work/unit-config")"
fi

# An upgrade (here: the same version again) keeps a local edit of the conffile.
printf '\nname = "edited-here"\n' >> "$target/etc/storyteller/storytellerd.toml"
if "${dpkg_root[@]}" --force-depends --force-confold --install "$deb" > "$work/reinstall.log" 2>&1; then
    grep -q '^name = "edited-here"$' "$target/etc/storyteller/storytellerd.toml" &&
        pass "installed again: the edited storytellerd.toml is kept (a conffile)" ||
        fail "installing again replaced the edited storytellerd.toml"
else
    fail "dpkg --install again: $(cat "$work/reinstall.log")"
fi

# A purge removes the package's files and conffile, and keeps the state.
if "${dpkg_root[@]}" --purge storyteller > "$work/purge.log" 2>&1; then
    left=$(cd "$target" && ls usr/bin/storytellerd etc/storyteller/storytellerd.toml usr/lib/systemd/system/storytellerd.service 2>/dev/null || true)
    [ -z "$left" ] && pass "purged: files and conffile gone" || fail "left after purge: $left"
    if [ -d "$target/var/lib/storyteller" ] || ! command -v systemd-tmpfiles >/dev/null; then
        pass "purged: /var/lib/storyteller kept"
    else
        fail "the purge removed /var/lib/storyteller"
    fi
else
    fail "dpkg --purge: $(cat "$work/purge.log")"
fi

echo "check-deb: $deb: $(du -k "$deb" | cut -f1) KiB"
if [ "$failures" -gt 0 ]; then
    echo "check-deb: $failures check(s) failed" >&2
    exit 1
fi
echo "check-deb: all checks passed"
