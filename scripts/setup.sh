#!/usr/bin/env bash
# Installs the Debian packages trainclock needs. Idempotent: silent when everything is present.
#   scripts/setup.sh native   CLI, desktop GUI, tests, benchmarks
#   scripts/setup.sh web      + Emscripten, Chromium, Xvfb for the site and browser tests
set -euo pipefail

native_packages=(build-essential cmake pkg-config libsimdjson-dev libtomlplusplus-dev catch2 libbenchmark-dev clang clang-format libclang-rt-14-dev
                 libsdl2-dev libimgui-dev libgl-dev pybind11-dev python3-dev python3-pytest
                 python3-venv python3-setuptools python3-wheel)
web_packages=(emscripten nodejs npm chromium xvfb xauth imagemagick python3 dpkg-dev)

wanted=("${native_packages[@]}")
if [[ "${1:-native}" == web ]]; then
    wanted+=("${web_packages[@]}")
fi

missing=()
for package in "${wanted[@]}"; do
    # npm/nodejs may come from elsewhere (a preinstalled node); accept the command instead.
    case "$package" in
        nodejs) command -v node >/dev/null && continue ;;
        npm) command -v npm >/dev/null && continue ;;
    esac
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi
