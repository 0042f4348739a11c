#!/usr/bin/env bash
# Builds the Debian package of Storyteller from this checkout, offline:
# OUTDIR/storyteller_VERSION_ARCH.deb (default OUTDIR: dist).
#
#   bash packaging/build-deb.sh [OUTDIR]
#
# Needs what building needs (Swift, libsqlite3-dev, libssl-dev, libcairo2-dev, libpango1.0-dev,
# libjpeg-dev, libwebp-dev) and dpkg-dev;
# packages must already be resolvable from SwiftPM's cache (a `swift build`
# has run once), as nothing is fetched. Builds the release binaries
# (packaging/build-release.sh: static Swift runtime), the man pages
# (packaging/manpages.sh), the shell completions, and lays out:
#
#   /usr/bin/storytellerd, /usr/bin/storyteller     stripped
#   /usr/lib/systemd/system/storytellerd.service    systemd/storytellerd.service as it is
#   /usr/lib/systemd/user/storytellerd.service      systemd/storytellerd.user.service as it is
#   /usr/lib/sysusers.d/storyteller.conf, /usr/lib/tmpfiles.d/storyteller.conf
#   /etc/storyteller/storytellerd.toml              Config/storytellerd.example.toml (a conffile)
#   /usr/share/man/man1/storyteller.1.gz, /usr/share/man/man8/storytellerd.8.gz
#   bash, zsh and fish completions of both binaries, in Debian's places
#   /usr/share/doc/storyteller/                     README.md, docs/, copyright, changelog.Debian.gz
#
# The version is the newest entry of packaging/debian/changelog, which must
# be the one the binaries say (API.version in Sources/StoryAPI/Version.swift)
# with a Debian revision; its date is the pages' date and every file's time
# (SOURCE_DATE_EPOCH, so that two builds of one commit give the same files).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022
out=${1:-dist}

fail() {
    echo "build-deb: $*" >&2
    exit 1
}
for tool in dpkg-deb dpkg-parsechangelog dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || fail "needs $tool (apt-get install dpkg-dev binutils gzip)"
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

changelog=packaging/debian/changelog
version=$(dpkg-parsechangelog -l "$changelog" -S Version)
upstream=${version%-*}
maintainer=$(dpkg-parsechangelog -l "$changelog" -S Maintainer)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l "$changelog" -S Timestamp)}
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
architecture=$(dpkg --print-architecture)

echo "== release binaries" >&2
bin=$(bash packaging/build-release.sh | tail -n 1)
for product in storytellerd storyteller; do
    said=$("$bin/$product" --version)
    [ "$said" = "$product $upstream" ] ||
        fail "$product --version says '$said' but the newest entry of $changelog is $version; add an entry for the new version"
done

echo "== man pages" >&2
bash packaging/manpages.sh "$work/man" "$date" "$upstream"

echo "== staging $version for $architecture" >&2
for product in storytellerd storyteller; do
    install -d "$root/usr/bin"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note -o "$root/usr/bin/$product" "$bin/$product"
    chmod 0755 "$root/usr/bin/$product"
    # A completion script is sourced, not run: no #! line (lintian).
    "$bin/$product" --generate-completion-script bash | sed '1{/^#!/d}' > "$work/$product.bash"
    "$bin/$product" --generate-completion-script zsh > "$work/$product.zsh"
    "$bin/$product" --generate-completion-script fish > "$work/$product.fish"
    install -D -m 0644 "$work/$product.bash" "$root/usr/share/bash-completion/completions/$product"
    install -D -m 0644 "$work/$product.zsh" "$root/usr/share/zsh/vendor-completions/_$product"
    install -D -m 0644 "$work/$product.fish" "$root/usr/share/fish/vendor_completions.d/$product.fish"
done
install -D -m 0644 systemd/storytellerd.service "$root/usr/lib/systemd/system/storytellerd.service"
install -D -m 0644 systemd/storytellerd.user.service "$root/usr/lib/systemd/user/storytellerd.service"
install -D -m 0644 systemd/storyteller.sysusers.conf "$root/usr/lib/sysusers.d/storyteller.conf"
install -D -m 0644 systemd/storyteller.tmpfiles.conf "$root/usr/lib/tmpfiles.d/storyteller.conf"
install -D -m 0644 Config/storytellerd.example.toml "$root/etc/storyteller/storytellerd.toml"
install -d "$root/usr/share/man/man1" "$root/usr/share/man/man8"
gzip -9n < "$work/man/storyteller.1" > "$root/usr/share/man/man1/storyteller.1.gz"
gzip -9n < "$work/man/storytellerd.8" > "$root/usr/share/man/man8/storytellerd.8.gz"

doc="$root/usr/share/doc/storyteller"
# README.md and docs/ keep their layout so the links between them work; the
# documents stay uncompressed so that the units' Documentation= can name one.
install -D -m 0644 README.md "$doc/README.md"
install -d "$doc/docs"
install -m 0644 docs/*.md docs/openapi.json "$doc/docs/"
gzip -9n < "$changelog" > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"
if [ -f packaging/debian/lintian-overrides ]; then
    install -D -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/storyteller"
fi

# The copyright file: Storyteller's and the toolchain's parts (written by
# hand), then each package SwiftPM linked into the binaries, found from the
# objects the linker was given, with its license and NOTICE.
checkouts="$(dirname "$(dirname "$bin")")/checkouts"
packages=()
for product in storytellerd storyteller; do
    for module in $(sed -n 's#^.*/\([^/]*\)\.build/.*$#\1#p' "$bin/$product.product/Objects.LinkFileList" | sort -u); do
        if [ -d "Sources/$module" ]; then continue; fi
        source=$(ls -d "$checkouts"/*/Sources/"$module" 2>/dev/null | head -n 1 || true)
        if [ -z "$source" ] && [ -f "$bin/$module.build/sources" ]; then source=$(head -n 1 "$bin/$module.build/sources"); fi
        [ -n "$source" ] || fail "cannot tell which package the module $module linked into $product comes from"
        package=${source#"$checkouts"/}
        packages+=("${package%%/*}")
    done
done
{
    cat packaging/debian/copyright
    for package in $(printf '%s\n' "${packages[@]}" | sort -u); do
        dir="$checkouts/$package"
        license=""
        for candidate in LICENSE LICENSE.txt LICENSE.md COPYING; do
            if [ -f "$dir/$candidate" ]; then license=$candidate; break; fi
        done
        [ -n "$license" ] || fail "$package (linked into the binaries) has no LICENSE file to put in the copyright file"
        echo "------------------------------------------------------------------------------"
        echo "$package $(git -C "$dir" describe --tags --always 2>/dev/null || true) (a Swift package, linked statically)"
        echo
        # Who holds the copyright: the NOTICE's line, else a source file's header.
        if [ -f "$dir/NOTICE.txt" ]; then
            holder=$(grep -m 1 -E '^[[:space:]]*Copyright' "$dir/NOTICE.txt" | sed 's/^[[:space:]]*//' || true)
        else
            holder=$(grep -rhoE -m 1 'Copyright \(c\) [0-9].*' "$dir/Sources" 2>/dev/null | head -n 1 || true)
        fi
        if grep -q 'Apache License' "$dir/$license" && grep -q 'Version 2.0' "$dir/$license"; then
            [ -z "$holder" ] || echo "$holder"
            echo
            echo "License: Apache-2.0 (/usr/share/common-licenses/Apache-2.0)"
        else
            echo "License:"
            echo
            sed -e 's/^$/./' -e 's/^/ /' "$dir/$license"
        fi
        if [ -f "$dir/NOTICE.txt" ]; then
            echo
            echo "Its NOTICE.txt:"
            echo
            sed -e 's/^$/./' -e 's/^/ /' "$dir/NOTICE.txt"
        fi
        echo
    done
} > "$doc/copyright"

# Dependencies: what the binaries link to, as dpkg-shlibdeps finds it from
# the libraries' packages (it wants a debian/control around it).
mkdir -p "$work/shlibdeps/debian"
printf 'Source: storyteller\n\nPackage: storyteller\nArchitecture: any\n' > "$work/shlibdeps/debian/control"
depends=$(cd "$work/shlibdeps" && dpkg-shlibdeps -O -e"$root/usr/bin/storytellerd" -e"$root/usr/bin/storyteller" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

# Installed-Size as dpkg-gencontrol counts it: KiB per file, rounded up, and
# one per directory or link.
installed_size=$(find "$root" -mindepth 1 -printf '%y %s\n' |
    awk '$1 == "f" { total += int(($2 + 1023) / 1024); next } { total += 1 } END { print total }')

install -d "$root/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCHITECTURE@/$architecture/" -e "s/@MAINTAINER@/$maintainer/" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" -e "s/@DEPENDS@/$depends/" packaging/debian/control > "$root/DEBIAN/control"
echo /etc/storyteller/storytellerd.toml > "$root/DEBIAN/conffiles"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$root/DEBIAN/"
(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
deb="$out/storyteller_${version}_${architecture}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >&2
echo "build-deb: $deb ($(du -k "$deb" | cut -f1) KiB; installed $installed_size KiB; Depends: $depends)" >&2
echo "$deb"
