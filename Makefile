# chakrasim: `make run` sets up, builds and simulates the built-in example;
# `make test` builds and runs the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= Release
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
APT_PACKAGES := cmake make g++ libprotobuf-dev protobuf-compiler libyaml-cpp-dev \
  nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev libpugixml-dev libns3-dev \
  pybind11-dev python3-dev libopenmpi-dev openmpi-bin
# Only the tests need these: graphviz renders `chakra visualize` SVG/PDF, chromium loads the
# HTML report headless, clang-format-14 checks that the tree follows .clang-format, SimGrid is
# the oracle the flow backend is checked against (tests/network/flow_simgrid_test.cc), pandas
# lets the Python module's test check RunResult.to_dataframe (tests/python/test_run.py).
TEST_APT_PACKAGES := graphviz chromium clang-format-14 libsimgrid-dev python3-pandas

.PHONY: all deps test-deps configure build simulator run test test-asan fuzz bench clean

all: build

# Installs whichever Debian packages are missing (apt-get; needs root or sudo).
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

test-deps:
	@missing=$$(for p in $(TEST_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages for the tests:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only the simulator: `make run` on a fresh clone does not wait for the test binaries.
simulator: configure
	@cmake --build $(BUILD) -j $(JOBS) --target chakrasim

run: simulator
	@$(BUILD)/chakrasim demo

# test-deps first: the build looks for SimGrid when it configures.
test: test-deps build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite built with AddressSanitizer and UndefinedBehaviorSanitizer (gcc).
test-asan: deps test-deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAKRASIM_SANITIZE=ON -DCHAKRASIM_BENCH=OFF >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	@cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# The fuzz targets never reach the ns3 backend, and Debian's ns-3 is built with gcc without
# sanitizers: the fuzz build leaves it out (CHAKRASIM_NS3=OFF).
# libFuzzer targets, each run on a copy of its seed corpus (tests/fuzz/corpus): for FUZZ_SECONDS,
# or, when FUZZ_RUNS is set, for exactly that many inputs from a fixed seed (repeatable: CI).
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
FUZZ_LIMIT = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS) -seed=1,-max_total_time=$(FUZZ_SECONDS))
FUZZ_TARGETS := et_reader network_config system_config other_configs pytorch_json kineto_link text_workload msccl_xml \
  fabric_text scalesim_files synthesis_model sweep_spec nccl_tests_log
fuzz: deps
	@for p in clang libclang-rt-14-dev; do dpkg -s $$p >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$p; }; done
	@CXX=clang++ cmake -S . -B $(BUILD)-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHAKRASIM_FUZZ=ON -DCHAKRASIM_NS3=OFF >/dev/null
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  work=$$(mktemp -d); cp tests/fuzz/corpus/$$t/* $$work/; \
	  echo "fuzz_$$t: $(FUZZ_LIMIT)"; \
	  $(BUILD)-fuzz/tests/fuzz/fuzz_$$t $$work $(FUZZ_LIMIT) -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)-fuzz/crash-$$t- > $$work.log 2>&1 || { tail -40 $$work.log; exit 1; }; \
	  grep -E "stat::number_of_executed_units" $$work.log; \
	  rm -rf $$work $$work.log; \
	done

# Benchmarks print figures; they are not part of `make test` or CI.
bench: build
	@bench/run_benchmarks.sh $(BUILD)

clean:
	rm -rf $(BUILD)
