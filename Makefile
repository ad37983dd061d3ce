# trainclock: the two newcomer commands are `make run` and `make test` (see README.md).
JOBS ?= $(shell nproc)
CLI  := build/bin/trainclock

.PHONY: setup build run test test-native bench clean

setup:
	@scripts/setup.sh native

build: setup
	@cmake --preset native >/dev/null
	@cmake --build --preset native -j $(JOBS)

# The main job: a default prediction as a readable table.
run: build
	@$(CLI) predict --model llama3-70b --gpu h100-sxm --gpus 1024 --precision bf16-mixed \
	    --tp 8 --pp 4 --seq 8192 --gbs 1024 --mbs 1 --recompute selective --tokens 15e12

test-native: build
	@ctest --preset native -j $(JOBS)

test: test-native

bench: build
	@for b in build/bin/bench_*; do $$b; done

clean:
	rm -rf build build-debug build-web
