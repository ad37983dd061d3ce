# trainclock: the two newcomer commands are `make run` and `make test` (see README.md).
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
SHELL := /bin/bash
CLI  := build/bin/trainclock
# cmake --build, without the "Built target" line of every up-to-date target: a second run is quiet
# (compiler progress and errors still show; pipefail keeps the build's exit status).
BUILD = set -o pipefail; cmake --build --preset $(1) -j $(JOBS) | { grep -v -E '^\[ *[0-9]+%\] Built target' || true; }

.PHONY: setup build run predict validate test test-native bench clean format format-check

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

# The README's test command: the source formatting check, native tests, the same core + CLI tests under
# ASan/UBSan with a short fuzz run of every parser, then the WebAssembly, browser and desktop tests.
# After the packages (one apt at a time), the native and the web build side by side, then two lanes
# at once: the native lane (the native tests beside the sanitizer build, then the sanitizer tests and
# the fuzz smoke) and the web lane (the core tests under node, then the browser and desktop tests,
# which need both builds). The web lane's single processes (node, one Chromium page) leave a core to
# the sanitizer build beside them. Lines of the two lanes interleave (--output-sync=line).
.PHONY: test-lane-native test-lane-web
test: format-check
	@scripts/setup.sh web
	@$(MAKE) -j2 --output-sync=line build web
	@$(MAKE) -j2 --output-sync=line test-lane-native test-lane-web

test-lane-native:
	@$(MAKE) build-debug & debug=$$!; $(MAKE) test-native; native=$$?; wait $$debug && exit $$native
	@$(MAKE) test-sanitize && $(MAKE) fuzz-smoke

test-lane-web:
	@$(MAKE) test-wasm && $(MAKE) test-browser && $(MAKE) test-gui

# Every C++ file as .clang-format (Debian's clang-format) lays it out; `make format` rewrites them.
CXX_SOURCES = $(shell git ls-files '*.cpp' '*.hpp' '*.h')
format: setup
	@clang-format -i $(CXX_SOURCES)

format-check: setup
	@clang-format --dry-run --Werror $(CXX_SOURCES) || { echo "format-check: run 'make format'"; exit 1; }

bench: build
	@for b in build/bin/bench_*; do $$b; done

clean:
	rm -rf build build-debug build-web

# ---- Sanitizers and fuzzing (issue 12): preset native-debug = clang, ASan + UBSan, -O1 ---------------
# build-debug/ holds the core, the CLI, their Catch2 tests and the libFuzzer targets (tests/fuzz/).
.PHONY: build-debug test-sanitize fuzz fuzz-smoke
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
FUZZ_SMOKE_SECONDS ?= 10

build-debug: setup
	@cmake --preset native-debug >/dev/null
	@$(call BUILD,native-debug)

test-sanitize: build-debug
	@ctest --preset native-debug -j $(JOBS)

# Every fuzz target, one at a time, for FUZZ_SECONDS each, or FUZZ_RUNS executions each (corpus kept
# in build-debug/fuzz/<name>/); one line of figures per target (executions, crashes, leaks, timeouts),
# also appended to build-debug/fuzz/summary.log. The issue-12 figure: `make fuzz FUZZ_RUNS=10000000`.
fuzz: build-debug
	@tests/fuzz/run.sh $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS),--seconds $(FUZZ_SECONDS)) build-debug

# The short run of `make test`: every seed replayed, then FUZZ_SMOKE_SECONDS of mutation, JOBS targets at a time.
fuzz-smoke: build-debug
	@tests/fuzz/run.sh --seconds $(FUZZ_SMOKE_SECONDS) --parallel $(JOBS) build-debug

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

# test-web: the core's Catch2 tests under node (test-wasm), then the browser tests against the native
# CLI (test-browser), one file at a time (two Chromium pages drawing at once on 2 cores miss the
# tests' 30 s waits).
.PHONY: test-wasm test-browser
test-web: test-wasm test-browser

test-wasm: web
	@ctest --preset web

test-browser: web build
	@cd tests/browser && node --test --test-concurrency=1 site.test.mjs features.test.mjs plan.test.mjs

test-gui: build setup-web
	@cd tests/browser && node --test desktop.test.mjs

# Sizes, first-frame time and predict() time in the page vs native; screenshots to docs/screenshots.
web-report: web build
	@node tests/browser/measure.mjs
