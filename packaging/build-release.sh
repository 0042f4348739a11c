#!/usr/bin/env bash
# Builds the release binaries that are installed (storytellerd, storyteller)
# so that they run on a machine without Swift: the Swift runtime, Foundation
# (with its ICU data) and libstdc++ are linked in statically, and no RUNPATH
# is written. What they still need at run time is the system's glibc (libc,
# libm, the loader, and libgcc_s, which glibc itself loads to unwind a thread
# at pthread_exit, so every glibc system has it), libsqlite3 and OpenSSL 3
# (libssl, libcrypto); the daemon also cairo, libjpeg-turbo and libwebp (its
# renderer), the CLI not. The script checks the result with readelf and fails
# otherwise.
#
#   bash packaging/build-release.sh [SCRATCH]     (default SCRATCH: .build-static)
#
# WITH_BENCH=1 also builds storyteller-bench the same way (not installed, not
# checked): its memory figures are then those of the binaries as shipped
# (docs/performance.md, "Memory as shipped").
#
# Prints the directory holding the two binaries on its last line. A scratch
# directory of its own because the link flags differ from a plain
# `swift build -c release`: sharing .build would rebuild everything each time
# one switches between the two.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${1:-.build-static}"

# `--static-swift-stdlib` links the Swift runtime and Foundation statically
# but still asks for libstdc++ dynamically (the toolchain's
# static-stdlib-args.lnk says `-lstdc++`; TOMLKit's toml++ is C++ too). A
# directory holding only libstdc++.a, searched before the compiler's own
# (which has libstdc++.so), makes that `-lstdc++` the static archive (GCC
# Runtime Library Exception). libgcc_s stays shared, on purpose: glibc loads
# it anyway (the daemon aborts at exit without it, "libgcc_s.so.1 must be
# installed for pthread_exit to work"), and a static copy of its unwinder
# (-static-libgcc) would make two unwinders in one process.
libstdcxx=$(clang -print-file-name=libstdc++.a)
if [ "${libstdcxx#/}" = "$libstdcxx" ] || [ ! -f "$libstdcxx" ]; then
    echo "build-release: libstdc++.a not found (clang -print-file-name=libstdc++.a said '$libstdcxx');" \
        "install libstdc++-dev for the compiler the Swift toolchain uses (e.g. libstdc++-12-dev)" >&2
    exit 1
fi
mkdir -p "$scratch/static-libstdc++"
ln -sfn "$libstdcxx" "$scratch/static-libstdc++/libstdc++.a"
static_libstdcxx_dir="$(cd "$scratch/static-libstdc++" && pwd)"

flags=(
    -c release --scratch-path "$scratch"
    --static-swift-stdlib --disable-local-rpath
    -Xswiftc -L -Xswiftc "$static_libstdcxx_dir"
    # Full RELRO (Debian's hardening flags): the GOT is read-only after start.
    -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
    # Relative relocations packed (DT_RELR, glibc 2.36, which the binaries
    # need anyway): about 95,000 of them took 2.2 MB as RELA entries, all
    # read at every start and resident after. lld, the toolchain's own
    # linker, writes them (gold, the default, cannot).
    -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
    # SwiftPM links executables with --export-dynamic: every public symbol of
    # every module went into .dynsym (29,284 in the daemon, 6,017 in the
    # CLI), megabytes of symbol tables read at start and resident after.
    # Nothing looks its own symbols up (no plugins, no dlsym of them), and a
    # statically linked binary backtraces no crash unless told where the
    # swift-backtrace helper is.
    -Xlinker --no-export-dynamic
)
for product in storytellerd storyteller; do
    echo "== swift build ${flags[*]} --product $product" >&2
    swift build "${flags[@]}" --product "$product" >&2
done
bin=$(swift build "${flags[@]}" --show-bin-path)

# What the binaries may ask the dynamic loader for; anything else means a
# dependency the package does not declare (or a toolchain library). The
# renderer's libraries (cairo; pango with glib for text; libjpeg-turbo and
# libwebp for pictures) are
# the daemon's only: the CLI draws nothing.
common='libc\.so\.6|libm\.so\.6|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libgcc_s\.so\.1|libssl\.so\.3|libcrypto\.so\.3|libsqlite3\.so\.0'
# zlib: ZIPFoundation's deflate, for project packages (the daemon writes and reads them).
renderer='libz\.so\.1|libcairo\.so\.2|libpangocairo-1\.0\.so\.0|libpango-1\.0\.so\.0|libgobject-2\.0\.so\.0|libglib-2\.0\.so\.0|libjpeg\.so\.62|libwebp\.so\.7'
for product in storytellerd storyteller; do
    allowed="^($common)\$"
    [ "$product" = storytellerd ] && allowed="^($common|$renderer)\$"
    dynamic=$(readelf -d "$bin/$product")
    needed=$(printf '%s\n' "$dynamic" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    unexpected=$(printf '%s\n' "$needed" | grep -Ev "$allowed" || true)
    if [ -n "$unexpected" ]; then
        echo "build-release: $product needs libraries it should not: $(echo $unexpected)" >&2
        exit 1
    fi
    if printf '%s\n' "$dynamic" | grep -Eq '\((RPATH|RUNPATH)\)'; then
        echo "build-release: $product has a run-time search path: $(printf '%s\n' "$dynamic" | grep -E 'R(UN)?PATH')" >&2
        exit 1
    fi
    # Defined symbols in .dynsym: none, unless --no-export-dynamic was lost.
    exported=$(readelf --dyn-syms -W "$bin/$product" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $8 != ""' | wc -l)
    if [ "$exported" -gt 0 ]; then
        echo "build-release: $product exports $exported symbols (link it with --no-export-dynamic)" >&2
        exit 1
    fi
    echo "build-release: $product needs only $(echo $needed)" >&2
done
if [ "${WITH_BENCH:-0}" = 1 ]; then
    echo "== swift build ${flags[*]} --product storyteller-bench" >&2
    swift build "${flags[@]}" --product storyteller-bench >&2
fi
echo "$bin"
