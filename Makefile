# vkjit: see README.md. `make demo` installs what is missing and runs a
# graph on the default Vulkan device; `make test` runs every test.

GO ?= go
BIN := bin/vkjit
DEMO := tests/testdata/elementwise

.PHONY: all deps build demo test test-long vet shaders gomlx-example clean

all: build

deps:
	@./.ci/install-deps

build: deps
	$(GO) build -o $(BIN) ./cmd/vkjit

demo: build
	$(BIN) devices
	VKJIT_VALIDATE=1 $(BIN) run --stats-json /dev/stdout $(DEMO)/graph.hlo $(DEMO)/x.npy $(DEMO)/y.npy

vet: deps
	$(GO) vet ./...
	cd gomlx && $(GO) vet ./...

# The tests switch the Khronos validation layer on themselves and fail on
# any message it reports; every generated kernel goes through spirv-val.
# The runtime's tests run twice: as lavapipe runs them (mapped memory) and
# with VKJIT_STAGED=1, the path of a discrete GPU (unmapped device memory,
# copies through a staging ring ordered by timeline semaphores). The second
# run keeps lavapipe at Mesa's 256 bits (8 lanes), so that on an AMD
# AVX-512 host, where vkjit runs it 512 bits wide (16 lanes), the kernels
# other hosts get run as well.
#
# Tests that need the corpora in ../shared skip without them; each skip is
# logged (VKJIT_SKIP_LOG) and counted at the end, and with CI set they
# fail instead.
#
# gomlx/ is a module of its own (so that vkjit does not depend on
# GoMLX): its tests run the GoMLX backend against GoMLX's pure-Go
# backend and the evaluator, and graphtests runs GoMLX's own tests of
# pkg/core/graph on both backends, failing if one that passes on the
# pure-Go backend fails on vkjit.
SKIPS := $(CURDIR)/bin/shared-skips.log

# go test's own limit is 10 minutes a package, and the root package's
# device tests take 4.5 minutes on a 2-core Zen 4 but 8.5 beside the other
# packages on a 2-core Zen 1 (AVX2, lavapipe at 8 lanes; 14.8 before the
# complex QR sweep became a device loop). The limit is there to stop a
# hang, not to time the tests.
TESTFLAGS := -count=1 -timeout 30m

test: vet
	@mkdir -p bin && rm -f $(SKIPS)
	VKJIT_SKIP_LOG=$(SKIPS) $(GO) test $(TESTFLAGS) ./...
	VKJIT_SKIP_LOG=$(SKIPS) VKJIT_STAGED=1 LP_NATIVE_VECTOR_WIDTH=256 $(GO) test $(TESTFLAGS) .
	cd gomlx && $(GO) test $(TESTFLAGS) ./...
	cd gomlx && VKJIT_STAGED=1 $(GO) test $(TESTFLAGS) .
	cd gomlx && $(GO) run ./graphtests -j 2
	@./.ci/shared-skips $(SKIPS)

# The corpus modules too long for CI (hlotest.LongWorkload: the fp8 GEMM
# loop, 11 minutes with its check on 2 cores, 16 GB of host memory, 1.8 GB
# of device memory, on a device that binds its 512 MiB arrays; lavapipe
# binds 128 MiB and refuses it by name) as well.
test-long: vet
	VKJIT_LONG_TESTS=1 $(GO) test -count=1 -timeout 90m -run 'TestCorpus' ./tests ./hlo/eval

# A small model trained with GoMLX's training loop on vkjit.
gomlx-example: deps
	cd gomlx && $(GO) run ./examples/train

# shaders/ keeps the disassembly of representative generated kernels
# (TestGolden fails when code generation changes them); this writes them
# anew, for the diff to be reviewed with the change.
shaders: deps
	$(GO) test -count=1 ./shaders -update

clean:
	rm -rf bin
