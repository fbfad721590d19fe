# chakrasim: `make run` sets up, builds and simulates the built-in example;
# `make test` builds and runs the whole test suite.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= Release
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
APT_PACKAGES := cmake make g++ libprotobuf-dev protobuf-compiler libyaml-cpp-dev \
  nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libbenchmark-dev

.PHONY: all deps configure build run test bench clean

all: build

# Installs whichever Debian packages are missing (apt-get; needs root or sudo).
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing missing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@$(BUILD)/chakrasim demo

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Benchmarks print figures; they are not part of `make test` or CI.
bench: build
	@bench/run_benchmarks.sh $(BUILD)

clean:
	rm -rf $(BUILD)
