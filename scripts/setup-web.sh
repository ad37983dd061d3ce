#!/usr/bin/env bash
# Prepares the WebAssembly build and the browser tests. Idempotent: silent when everything is present.
#   1. the Debian packages of `scripts/setup.sh web` (Emscripten, Chromium, Xvfb, ...);
#   2. a deb-src entry for bookworm main, then the Debian source packages of imgui, SDL2 and simdjson
#      unpacked into third_party/ (ignored; the wasm build cannot use the native static libraries);
#   3. SDL2 built for wasm once, installed into build-web/_deps/sdl2 (cached in the build folder);
#   4. playwright-core in tests/browser/node_modules (from the committed package-lock.json).
# Emscripten 3.1.6 (Debian) cannot fetch its SDL2 port offline, hence the build from source.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
third_party="$root/third_party"
build_web="$root/build-web"
sdl2_prefix="$build_web/_deps/sdl2"
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

# --- 3. SDL2 for wasm, once, cached in the build folder ------------------------------------------
if [[ ! -f "$sdl2_prefix/lib/cmake/SDL2/SDL2Config.cmake" ]]; then
    echo "setup-web: building SDL2 for WebAssembly (once, about 3 minutes on 2 cores)"
    sdl2_build="$build_web/_deps/sdl2-build"
    mkdir -p "$build_web/_deps"
    rm -rf "$sdl2_build"
    emcmake cmake -S "$third_party/sdl2" -B "$sdl2_build" -DCMAKE_BUILD_TYPE=Release \
        -DSDL_SHARED=OFF -DSDL_STATIC=ON -DSDL_TEST=OFF -DSDL_THREADS=OFF \
        -DCMAKE_INSTALL_PREFIX="$sdl2_prefix" >"$build_web/_deps/sdl2-configure.log" 2>&1 ||
        { tail -n 30 "$build_web/_deps/sdl2-configure.log"; exit 1; }
    cmake --build "$sdl2_build" -j "$(nproc)" >"$build_web/_deps/sdl2-build.log" 2>&1 &&
        cmake --install "$sdl2_build" >>"$build_web/_deps/sdl2-build.log" 2>&1 ||
        { tail -n 30 "$build_web/_deps/sdl2-build.log"; exit 1; }
    rm -rf "$sdl2_build"
fi

# --- 4. playwright-core for the browser tests ----------------------------------------------------
browser_tests="$root/tests/browser"
if [[ ! -d "$browser_tests/node_modules/playwright-core" ]]; then
    echo "setup-web: installing playwright-core (npm)"
    (cd "$browser_tests" && npm ci --silent --no-audit --no-fund >/dev/null)
fi
