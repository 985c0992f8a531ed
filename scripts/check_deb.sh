#!/usr/bin/env bash
# The Debian package (cmake/package.cmake): builds it from a built tree with cpack, installs it with
# dpkg -i, runs the installed /usr/bin/tessera, builds examples/consumer against /usr (find_package
# without a prefix path) and runs it, then removes the package and checks that nothing is left.
#   bash scripts/check_deb.sh [BUILD_DIR]      (as root, or with sudo)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
if dpkg-query -W -f='${Status}' tessera 2>/dev/null | grep -q "install ok installed"; then
  echo "check_deb: a tessera package is installed already; remove it first (dpkg -r tessera)" >&2
  exit 1
fi
work=$(mktemp -d /tmp/tessera-deb.XXXXXX)
cleanup() {
  $SUDO dpkg -r tessera > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$build" && cpack -G DEB -B "$work" > "$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(find "$work" -maxdepth 1 -name 'tessera_*.deb')
echo "package: $(basename "$deb"), $(du -h "$deb" | cut -f1); $(dpkg-deb -f "$deb" Depends)"
$SUDO dpkg -i "$deb" > /dev/null
echo "installed /usr/bin/tessera: $(/usr/bin/tessera --version)"
cmake -S examples/consumer -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$work/consumer" > /dev/null
echo "consumer against /usr: $("$work/consumer/consumer")"
$SUDO dpkg -r tessera > /dev/null
if [[ -e /usr/bin/tessera || -e /usr/include/tessera/tessera.h ]]; then
  echo "check_deb: files left behind after dpkg -r tessera" >&2
  exit 1
fi
echo "removed again: /usr/bin/tessera and /usr/include/tessera are gone"
