#!/usr/bin/env bash
# Prepares the WebAssembly build and the browser tests. Idempotent: silent when everything is present.
#   1. the Debian packages of `scripts/setup.sh web` (Emscripten, Chromium, Xvfb, ...);
#   2. a deb-src entry for bookworm main, then the Debian source packages of imgui, SDL2 and simdjson
#      unpacked into third_party/ (ignored; the wasm build cannot use the native static libraries);
#   3. playwright-core in tests/browser/node_modules (from the committed package-lock.json).
# Emscripten 3.1.6 (Debian) cannot fetch its SDL2 port offline: the web build compiles SDL2 from
# these sources itself (cmake/Sdl2Wasm.cmake).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
third_party="$root/third_party"
export NODE_PATH=/usr/share/nodejs  # Debian's emcc needs its acorn from here (node is nodesource's)

sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)

"$root/scripts/setup.sh" web

# --- 2. Debian source packages -------------------------------------------------------------------
# Unpacked folder name -> source package. Folder names are fixed so CMake finds them.
declare -A sources=([imgui]=imgui [sdl2]=libsdl2 [simdjson]=simdjson)
need_sources=0
for dir in "${!sources[@]}"; do
    [[ -d "$third_party/$dir" ]] || need_sources=1
done
if ((need_sources)); then
    src_list=/etc/apt/sources.list.d/trainclock-deb-src.sources
    if [[ ! -f "$src_list" ]]; then
        # Same archive host as the existing bookworm `deb` entry.
        host="$(grep -h -o -E 'https?://[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
                2>/dev/null | head -n1 || true)"
        host="${host:-http://deb.debian.org/debian}"
        printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "${host%/}" | "${sudo_cmd[@]}" tee "$src_list" >/dev/null
        "${sudo_cmd[@]}" apt-get update -qq
    fi
    download="$third_party/_download"
    mkdir -p "$download"
    for dir in "${!sources[@]}"; do
        [[ -d "$third_party/$dir" ]] && continue
        package="${sources[$dir]}"
        echo "setup-web: fetching the Debian source of $package"
        (cd "$download" && apt-get source --download-only -qq "$package" >/dev/null 2>&1) || {
            "${sudo_cmd[@]}" apt-get update -qq
            (cd "$download" && apt-get source --download-only -qq "$package" >/dev/null)
        }
        # The upstream tarball (<package>_<version>.orig.tar.*) holds the sources; Debian's patches
        # only touch packaging. Unpack it into third_party/<dir> with its top folder stripped.
        tarball="$(ls "$download/${package}_"*.orig.tar.* | grep -v '\.asc$' | head -n1)"
        mkdir -p "$third_party/$dir.tmp"
        tar -xf "$tarball" -C "$third_party/$dir.tmp" --strip-components=1
        mv "$third_party/$dir.tmp" "$third_party/$dir"
    done
fi

# --- 3. playwright-core for the browser tests ----------------------------------------------------
browser_tests="$root/tests/browser"
if [[ ! -d "$browser_tests/node_modules/playwright-core" ]]; then
    echo "setup-web: installing playwright-core (npm)"
    (cd "$browser_tests" && npm ci --silent --no-audit --no-fund >/dev/null)
fi
