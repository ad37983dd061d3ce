# trainclock: the two newcomer commands are `make run` and `make test` (see README.md).
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
SHELL := /bin/bash
CLI  := build/bin/trainclock
# cmake --build, without the "Built target" line of every up-to-date target: a second run is quiet
# (compiler progress and errors still show; pipefail keeps the build's exit status).
BUILD = set -o pipefail; cmake --build --preset $(1) -j $(JOBS) | { grep -v -E '^\[ *[0-9]+%\] Built target' || true; }

.PHONY: setup build run predict validate test test-native bench clean

setup:
	@scripts/setup.sh native

build: setup
	@cmake --preset native >/dev/null
	@$(call BUILD,native)

# The main job: a default prediction as a readable table, then the calculator served locally.
run: predict serve

predict: build
	@$(CLI) predict --model llama3-70b --gpu h100-sxm --gpus 1024 --precision bf16-mixed \
	    --tp 8 --pp 4 --sp --zero 1 --seq 8192 --gbs 1024 --mbs 1 --recompute selective --tokens 15e12

# Accuracy against the published measurements in presets/validation (issue 3).
validate: build
	@$(CLI) validate

test-native: build
	@ctest --preset native -j $(JOBS)

test: test-native test-web test-gui

bench: build
	@for b in build/bin/bench_*; do $$b; done

clean:
	rm -rf build build-debug build-web

# ---- Web front end (H-web): the WebAssembly site, its browser tests, the desktop app test ----------
.PHONY: setup-web web serve test-web test-gui web-report
PORT ?= 8000

setup-web:
	@scripts/setup-web.sh

# build-web/site/: index.html, trainclock.js, trainclock.wasm, style.css, icon.svg (deployable as is).
web: setup-web
	@cmake --preset web >/dev/null
	@$(call BUILD,web)

serve: web
	@echo "trainclock: open http://127.0.0.1:$(PORT)/ (Ctrl+C stops)"
	@python3 -m http.server $(PORT) --bind 127.0.0.1 --directory build-web/site >/dev/null

# The core's Catch2 tests under node (wasm), then the browser tests against the native CLI.
test-web: web build
	@ctest --preset web
	@cd tests/browser && node --test site.test.mjs features.test.mjs

test-gui: build setup-web
	@cd tests/browser && node --test desktop.test.mjs

# Sizes, first-frame time and predict() time in the page vs native; screenshots to docs/screenshots.
web-report: web build
	@node tests/browser/measure.mjs
