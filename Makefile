# vaccel - top-level entry point. CMake + Ninja do the building underneath.
#
#   make deps    install every Debian package the build and tests need (idempotent)
#   make         build all userspace into build/
#   make test    deps + build + every test (unit, ABI, end to end)
#   make bench   deps + build + benchmarks
#   make demo    deps + build + run the example model through vaccelctl
#   make clean   remove build/

BUILD ?= build
CMAKE_FLAGS ?=
SHELL := /bin/bash

DEPS := build-essential cmake ninja-build pkg-config \
	liburing-dev flatbuffers-compiler libflatbuffers-dev \
	libcmocka-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev \
	libfmt-dev libspdlog-dev libeigen3-dev libtomlplusplus-dev \
	python3 python3-numpy

.PHONY: all build deps test bench demo clean configure

all: build

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing $$missing"; \
		SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "deps: all present"; fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD)

test: deps
	$(MAKE) build
	cd $(BUILD) && ctest --output-on-failure --timeout 300

bench: deps
	$(MAKE) build
	$(BUILD)/benchmarks/bench_codec --benchmark_min_time=0.05
	$(BUILD)/benchmarks/bench_handles --benchmark_min_time=0.05

demo: deps
	$(MAKE) build
	examples/run-demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)
