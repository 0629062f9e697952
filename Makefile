# cloud-provider-example — see README.md. Everything a target needs is built
# or installed by the repo's own scripts (hack/), with progress shown.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
# Cache for things built from source that outlive `make clean` (control plane).
CACHE_DIR ?= $(HOME)/.cache/cloud-provider-example
# The project's own Terraform CLI config (filesystem mirror for our provider,
# no network). The environment may point TF_CLI_CONFIG_FILE at a missing file.
TF_CLI_CONFIG := $(BIN)/terraform.rc
# A hang guard per package, not a speed target: the e2e package alone takes
# about 23 minutes on these machines; the whole suite about 25 warm.
TEST_TIMEOUT ?= 40m
# Tools built from the Go module proxy by their targets (instant once
# built); expanded in recipes only, after their prerequisites ran.
HELM = $(shell CACHE_DIR=$(CACHE_DIR) hack/helm.sh)
VERSITYGW = $(shell CACHE_DIR=$(CACHE_DIR) hack/versitygw.sh)
TOFU = $(shell CACHE_DIR=$(CACHE_DIR) hack/tofu.sh)
GOLANGCI_LINT = $(shell CACHE_DIR=$(CACHE_DIR) hack/golangci-lint.sh)
CHROMIUM = $(shell hack/chromium.sh)

export CHECKPOINT_DISABLE := 1

# One set of build flags for everything make compiles: the binaries, the
# provider's reproducible build (hack/provider-mirror.sh), the test binaries
# and the tools built from the module proxy (hack/*.sh pass the same flags).
# A package, the standard library first, is then compiled once on a cold
# machine, not once per flag set (the provider's build alone recompiled its
# whole graph, 67 s, after make build). -dwarf=false: no debug information
# is compiled that every link then strips (-s -w) or nobody reads (tests);
# it took 5 to 13 % of the compilers' CPU (the provider's graph, cold,
# measured side by side: 178 against 170 CPU-s loaded, 147 against 128 quiet).
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(GOFLAGS) -trimpath -gcflags=all=-dwarf=false)

DEMO_DIR ?= $(CURDIR)/.demo
# hack/testcpu's records of a make test or make test-short run.
TEST_CPU := $(BIN)/test-cpu.tsv
# Every package, in the order go test starts them (see test).
TEST_PACKAGES := ./test/e2e/ ./...

.PHONY: all build prerequisites provider control-plane workloads helm versitygw tofu chromium golangci-lint test test-short test-skew chaos soak soak-long memory bench lint fmt clean demo demo-down

all: build

build: ## all binaries into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

control-plane: ## etcd + kube-apiserver built from the Go module proxy, cached in $(CACHE_DIR)
	@CACHE_DIR=$(CACHE_DIR) hack/control-plane.sh >/dev/null

workloads: control-plane ## kube-controller-manager, kube-scheduler, kwok (fake kubelets) and CoreDNS (a UDPRoute backend) for the Gateway API conformance run, built like the control plane
	@K8S_COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler" CACHE_DIR=$(CACHE_DIR) hack/control-plane.sh >/dev/null
	@CACHE_DIR=$(CACHE_DIR) hack/kwok.sh >/dev/null
	@CACHE_DIR=$(CACHE_DIR) hack/coredns.sh >/dev/null

helm: ## helm built from the Go module proxy, cached in $(CACHE_DIR) (lints and renders deploy/chart)
	@CACHE_DIR=$(CACHE_DIR) hack/helm.sh >/dev/null

versitygw: ## S3 server for the s3 state backend tests, built from the Go module proxy, cached in $(CACHE_DIR)
	@CACHE_DIR=$(CACHE_DIR) hack/versitygw.sh >/dev/null

tofu: ## OpenTofu (the second distribution) built from the Go module proxy, cached in $(CACHE_DIR)
	@CACHE_DIR=$(CACHE_DIR) hack/tofu.sh >/dev/null

chromium: ## Debian's Chromium for the review page's browser test and benchmark (apt-get, about 30 s once)
	@hack/chromium.sh >/dev/null

provider: ## provider binary + offline filesystem mirror + CLI config + lock file in bin/
	@hack/provider-mirror.sh $(BIN)

demo: build provider control-plane workloads helm ## simulator + control plane + CCM + nodes, pods that answer, a LoadBalancer Service and a Gateway, curled
	@$(GO) build -o $(BIN)/example-demo ./hack/demo
	@$(BIN)/example-demo up --dir $(DEMO_DIR) --bin $(BIN) --helm $(HELM)

demo-down: ## stop the demo and remove its data
	@if [ -x $(BIN)/example-demo ]; then $(BIN)/example-demo down --dir $(DEMO_DIR); else rm -rf $(DEMO_DIR); fi

prerequisites: ## what make test needs beside the Go module proxy: terraform on PATH, PostgreSQL (installed from Debian's packages if missing)
	@hack/prerequisites.sh

# Every test, never a silent skip: hack/testsummary prints what go test
# prints, the skipped tests and "N passed, N failed, N skipped", and fails
# on a skip unless EXAMPLE_ALLOW_SKIPS=1.
#
# -vet=off: go vet's analyzers run in make lint (golangci-lint's govet),
# over the test files too; go test's own pass repeated them, and on a cold
# machine computed their facts for every dependency again.
#
# The e2e package is named first so that go test builds and starts it
# first: it is the longest, and the other packages run beside it, one at
# a time (naming runner, engine and tfprovider next was tried: the one
# beside e2e's parallel tests slows, whichever it is). make lint
# runs beside the tests too, niced, so that it takes the CPU the end-to-end
# tests leave idle while they wait on the cloud and the API server, not the
# CPU they need (on a cold machine it builds golangci-lint there first,
# which no test needs, then lints with a cold cache: over 14 minutes beside
# the tests in all); its output follows the tests' summary, and its failure
# fails the run.
#
# -exec hack/testcpu: each test binary's CPU, with every process it
# waited for (terraform, control planes, controllers), counted by the
# kernel; testsummary prints the total and the busiest packages. On two
# cores the suite's wall time falls no lower than half of it.
# (Building the tools in parallel was measured and gained nothing: they are
# CPU-bound.)
test: prerequisites build provider control-plane workloads helm versitygw tofu chromium ## every test (what .ci/run calls)
	@hack/check-tracked-sizes.sh
	@$(GO) build -o $(BIN)/ ./hack/testsummary ./hack/testcpu
	@echo "make lint: runs beside the tests (golangci-lint built first if it is not cached); its output follows their summary"
	@set -o pipefail; rm -f $(TEST_CPU); \
	nice -n 19 $(MAKE) --no-print-directory lint >$(BIN)/lint.log 2>&1 & lint=$$!; \
	TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_VERSITYGW=$(VERSITYGW) EXAMPLE_TOFU=$(TOFU) EXAMPLE_CHROMIUM=$(CHROMIUM) EXAMPLE_TEST_CPU=$(TEST_CPU) \
		$(GO) test -json -count=1 -vet=off -timeout $(TEST_TIMEOUT) -exec $(BIN)/testcpu $(TEST_PACKAGES) | $(BIN)/testsummary -cpu $(TEST_CPU); tests=$$?; \
	wait $$lint; linted=$$?; \
	echo "make lint (run beside the tests):"; cat $(BIN)/lint.log; \
	if [ $$linted -ne 0 ]; then echo "FAIL: make lint"; fi; \
	[ $$tests -eq 0 ] && [ $$linted -eq 0 ]

# The fast tier, for iteration between changes: go test -short, the unit
# tests and the end-to-end tests that neither scale up nor take minutes.
# What it leaves out make test runs: the tests marked testsize.SkipShort
# (the scale tests, the long ones) and, TF_ACC unset, the provider's
# acceptance tests. testsummary -short lists them and fails on any other
# skip.
test-short: prerequisites build provider control-plane workloads helm versitygw tofu chromium ## the fast tier between changes: go test -short (unit tests and the e2e tests that neither scale up nor take minutes, about 5 minutes warm), listing what it left out; no lint
	@$(GO) build -o $(BIN)/ ./hack/testsummary ./hack/testcpu
	@set -o pipefail; rm -f $(TEST_CPU); \
	TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_VERSITYGW=$(VERSITYGW) EXAMPLE_TOFU=$(TOFU) EXAMPLE_CHROMIUM=$(CHROMIUM) EXAMPLE_TEST_CPU=$(TEST_CPU) \
		$(GO) test -short -json -count=1 -vet=off -timeout $(TEST_TIMEOUT) -exec $(BIN)/testcpu $(TEST_PACKAGES) | $(BIN)/testsummary -short -cpu $(TEST_CPU)

# The oldest and newest API servers of the supported range that build here
# (docs/kubernetes-versions.md); make test runs against hack/control-plane.sh's
# default (1.36).
K8S_SKEW ?= v1.34.1 v1.37.1
SKEW_TESTS ?= TestLoadBalancerService|TestRoutesFollowNodes|TestNodeLifecycle|TestHTTPSFromTLSSecret|TestServiceGroup|TestTenancy|TestPreview|TestManualApproval|TestRestartRunsNoTerraform|TestKubernetesStateBackend|TestDriftDetectedAndCorrected|TestNoSecretLeaks

test-skew: build provider helm ## the deploy tests and the core e2e tests against the oldest and newest supported API servers (K8S_SKEW), each built like the default one
	@$(GO) build -o $(BIN)/testsummary ./hack/testsummary
	set -o pipefail; for v in $(K8S_SKEW); do \
		echo "test-skew: kube-apiserver $$v"; \
		K8S_VERSION=$$v CACHE_DIR=$(CACHE_DIR) hack/control-plane.sh >/dev/null || exit 1; \
		export K8S_VERSION=$$v TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM); \
		{ $(GO) test -json -count=1 -timeout $(TEST_TIMEOUT) ./deploy/; \
		  $(GO) test -json -count=1 -timeout $(TEST_TIMEOUT) -run '^($(SKEW_TESTS))$$' ./test/e2e/; } | $(BIN)/testsummary || exit 1; \
	done

chaos: build provider control-plane helm ## the full chaos run (50 Services, 10 kills, PostgreSQL down 30 s), summary printed; make test runs a short one
	set -o pipefail; TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_SCALE=full \
		$(GO) test -count=1 -timeout 30m -v -run '^TestChaos$$' ./test/e2e/ | grep -Ev '^\s+[IWE][0-9]{4} '

soak: build provider control-plane helm ## one controller through 5,000 terraform processes: live heap, RSS, goroutines and open files per process and the heap profile's diff, fails on growth; make test runs a short one
	set -o pipefail; TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_SCALE=full \
		$(GO) test -count=1 -timeout 40m -v -run '^TestSoak$$' ./test/e2e/ | grep -Ev '^\s+[IWE][0-9]{4} '

soak-long: build provider control-plane helm ## a day of drift checks over 100 Services with changes mixed in, 20,000 terraform processes (about an hour): fails unless memory levels off
	set -o pipefail; TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_SCALE=long \
		$(GO) test -count=1 -timeout 150m -v -run '^TestSoak$$' ./test/e2e/ | grep -Ev '^\s+[IWE][0-9]{4} '

memory: build provider control-plane helm ## the controller's memory with 100, 1,000 and 3,000 Services (docs/scale.md), figures printed
	TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_MEMORY_SERVICES=100,1000,3000 \
		$(GO) test -count=1 -timeout 60m -run '^$$' -bench '^BenchmarkMemoryPerObject$$' -benchtime 1x ./test/e2e/

# The scale tests make test runs at the smallest size that proves them run
# here at full size ($(SCALE_TESTS), EXAMPLE_SCALE=full), beside the
# benchmarks; make soak and make chaos are the other two.
SCALE_TESTS ?= TestShardsSpreadServices

bench: build provider control-plane workloads helm chromium ## benchmarks, figures printed, and the scale tests at full size (SCALE_TESTS: sharding over 430 Services)
	TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) EXAMPLE_HELM=$(HELM) EXAMPLE_CHROMIUM=$(CHROMIUM) EXAMPLE_SCALE=full \
		$(GO) test -run '^($(SCALE_TESTS))$$' -bench . -benchtime 3s ./...

golangci-lint: ## golangci-lint built from the Go module proxy, cached in $(CACHE_DIR)
	@CACHE_DIR=$(CACHE_DIR) hack/golangci-lint.sh >/dev/null

# go vet's analyzers run as golangci-lint's govet (in its standard set).
lint: golangci-lint ## gofmt and golangci-lint (.golangci.yml, govet among its linters); make test runs it
	@out=$$(gofmt -l $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GOLANGCI_LINT) run ./...

fmt:
	gofmt -w $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')

clean:
	rm -rf $(BIN)
