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
TEST_TIMEOUT ?= 25m

export CHECKPOINT_DISABLE := 1

.PHONY: all build provider test test-unit bench lint fmt clean

all: build

build: ## all binaries into bin/
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

provider: ## provider binary + offline filesystem mirror + CLI config + lock file in bin/
	@hack/provider-mirror.sh $(BIN)

test: build provider ## every test (what .ci/run calls)
	TF_ACC=1 TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) \
		$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

bench: build provider ## benchmarks, figures printed
	TF_CLI_CONFIG_FILE=$(TF_CLI_CONFIG) EXAMPLE_BIN=$(BIN) \
		$(GO) test -run '^$$' -bench . -benchtime 3s ./...

lint: ## gofmt + go vet
	@out=$$(gofmt -l $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go') $$(git ls-files --others --exclude-standard '*.go')

clean:
	rm -rf $(BIN)
