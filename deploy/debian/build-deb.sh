#!/usr/bin/env bash
# Builds stream-top's Debian package from a built binary, with dpkg-deb alone (no cargo-deb to
# compile): the binary, its man page and shell completions (made by the binary itself), the
# systemd unit, an example Prometheus scrape configuration, an example --web-config and the copyright file.
#
#   deploy/debian/build-deb.sh OUTDIR [BINARY]
#
# BINARY defaults to the static (musl) release build,
# target/x86_64-unknown-linux-musl/release/stream-top (cargo build --release --target
# x86_64-unknown-linux-musl); a glibc build works too, and its Depends are then read from
# the libraries it links. OUTDIR gets stream-top_VERSION-REVISION_ARCH.deb and its path is
# printed; it must lie outside the repository's tracked files (target/ is fine).
# DEB_REVISION (default 1) and DEB_MAINTAINER override those fields.
set -euo pipefail

die() {
  echo "build-deb: $*" >&2
  exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: build-deb.sh OUTDIR [BINARY]"
out=$1
bin=${2:-${CARGO_TARGET_DIR:-$repo/target}/x86_64-unknown-linux-musl/release/stream-top}
[ -x "$bin" ] || die "no executable $bin: build it first (cargo build --release --target x86_64-unknown-linux-musl)"
mkdir -p "$out" || die "cannot make the output directory $out"
out=$(cd "$out" && pwd)
# A package is a build output: never leave one where git would offer to commit it.
if [ "${out#"$repo"/}" != "$out" ] || [ "$out" = "$repo" ]; then
  git -C "$repo" check-ignore -q "$out" || die "$out is inside the repository and not ignored: give a directory outside it, or under target/"
fi

# The version in Cargo.toml's [package] table, the first version line after it.
version=$(sed -n '/^\[package\]/,/^\[/{s/^version *= *"\([^"]*\)".*/\1/p}' "$repo/Cargo.toml" | head -n1)
[ -n "$version" ] || die "no version in the [package] table of $repo/Cargo.toml"
revision=${DEB_REVISION:-1}
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-stream-top developers <stream-top@localhost>}

# The packages holding the libraries the binary links, libc6 at the newest glibc symbol
# version it uses; a static binary links none and depends on nothing.
depends() {
  local libs lib path pkg glibc deps=()
  libs=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $libs; do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [ -n "$path" ] || die "$bin links $lib, which no installed package provides"
    # dpkg knows a file by the path its package names, before or after /lib -> /usr/lib.
    pkg=$(dpkg -S "$path" "$(readlink -f "$path")" 2>/dev/null | head -n1 | cut -d: -f1)
    [ -n "$pkg" ] || die "no installed package owns $path ($lib)"
    if [ "$pkg" = libc6 ]; then
      glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
      pkg="libc6${glibc:+ (>= $glibc)}"
    fi
    deps+=("$pkg")
  done
  [ ${#deps[@]} -eq 0 ] || printf '%s\n' "${deps[@]}" | sort -u | paste -sd, | sed 's/,/, /g'
}
deps=$(depends)

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
umask 022
chmod 755 "$stage"
doc=$stage/usr/share/doc/stream-top
# Stripped, as Debian ships binaries: symbols are most of a release build's size.
install -D -m 755 "$bin" "$stage/usr/bin/stream-top"
strip "$stage/usr/bin/stream-top"
install -d "$stage/usr/share/man/man1" "$doc/examples" "$stage/lib/systemd/system" \
  "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/share/fish/vendor_completions.d"
"$bin" --generate man | gzip -9n >"$stage/usr/share/man/man1/stream-top.1.gz"
"$bin" --generate complete-bash >"$stage/usr/share/bash-completion/completions/stream-top"
"$bin" --generate complete-zsh >"$stage/usr/share/zsh/vendor-completions/_stream-top"
"$bin" --generate complete-fish >"$stage/usr/share/fish/vendor_completions.d/stream-top.fish"
# The unit as deploy/ has it, at the path the package installs the binary to.
sed 's#/usr/local/bin/stream-top#/usr/bin/stream-top#g' "$repo/deploy/stream-top.service" \
  >"$stage/lib/systemd/system/stream-top.service"
install -m 644 "$repo/deploy/prometheus/scrape.yml" "$repo/deploy/prometheus/rules.yml" \
  "$repo/deploy/web-config.yml" "$doc/examples/"
cat >"$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: stream-top

Files: *
Copyright: The stream-top developers
License: MIT or Apache-2.0
 stream-top is licensed under either of the MIT licence or the Apache License, Version 2.0,
 at your option. The Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0; the MIT
 licence follows.
 .
$(sed -e 's/^$/./' -e 's/^/ /' "$repo/LICENSE-MIT")
COPYRIGHT
# Whatever the files' modes where they came from: directories 755, data 644.
find "$stage" -type d -exec chmod 755 {} +
find "$stage" -type f ! -path "$stage/usr/bin/*" -exec chmod 644 {} +

install -d "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
{
  echo "Package: stream-top"
  echo "Version: $version-$revision"
  echo "Architecture: $arch"
  echo "Maintainer: $maintainer"
  echo "Installed-Size: $size"
  [ -z "$deps" ] || echo "Depends: $deps"
  echo "Section: utils"
  echo "Priority: optional"
  echo "Description: top for memory bandwidth, and a bandwidth canary for Prometheus"
  echo " stream-top runs the STREAM triad over a grid of thread counts and working sets and"
  echo " shows, live, what each cell delivers. With --headless --serve it keeps measuring at"
  echo " a small duty and serves the figures on /metrics (stream-top.service; not enabled on"
  echo " install: systemctl enable --now stream-top)."
} >"$stage/DEBIAN/control"
# The unit is not enabled on install (it binds a port); systemd is told the unit file changed,
# and a running service is stopped before its binary goes.
cat >"$stage/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
SCRIPT
cat >"$stage/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then systemctl stop stream-top.service || true; fi
SCRIPT
cp "$stage/DEBIAN/postinst" "$stage/DEBIAN/postrm"
chmod 755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

deb=$out/stream-top_$version-${revision}_$arch.deb
dpkg-deb --build --root-owner-group "$stage" "$deb" >/dev/null
echo "$deb"
