GO ?= go
FUZZTIME ?= 30s
RAPID_CHECKS ?= 1000
# gofmt ships with Go, next to the go command.
GOFMT ?= $(shell $(GO) env GOROOT)/bin/gofmt
# Verified to build and run with Go 1.26 here (go run ...@version; go.mod is
# not touched).
STATICCHECK_VERSION ?= v0.8.2
# Packages that may hold fuzz targets.
FUZZ_PKGS ?= ./fuzz/ ./harness/

.PHONY: all run test vet fmtcheck bench fuzz props lint mutants check clean e2e kernel pgo icount

# The kernel target (docs/kernel-target.md): the files of a kernel tree that
# the build of its fgraph.c reads, extracted from Debian's linux-source-6.12
# (apt-get install linux-source-6.12) into an ignored cache folder.
KERNEL_TARBALL ?= /usr/src/linux-source-6.12.tar.xz
KERNEL_DIR ?= $(CURDIR)/.cache/kernel/linux-source-6.12
KERNEL_FILES = kernel/trace/fgraph.c include/linux/ftrace.h include/linux/sched.h
# make test runs the kernel-target tests on the extracted tree when it is
# there (they skip without one, and fail instead when CI is set).
ifneq ($(wildcard $(KERNEL_DIR)/kernel/trace/fgraph.c),)
test: export FGCHECK_KERNEL ?= $(KERNEL_DIR)
endif

all: check

# Explore the default variant (latest) at the standard bound and print the
# summary. Exit 0 on the baseline (known findings allowed).
run:
	$(GO) run ./cmd/fgcheck explore --variant latest --scenario std --kernel=""

# The timeout is per package: the harness package's soundness tests took
# 614 s alone on a slower host (an AMD EPYC, 7 Dec 2026), where 15 minutes
# left too little room; its 421-525 s on the usual one.
test: vet fmtcheck
	$(GO) test -timeout 30m ./...

vet:
	$(GO) vet ./...

# Fails listing the files gofmt would change.
fmtcheck:
	@files=$$($(GOFMT) -l $$(find . -name '*.go' -not -path './.git/*')); \
	if [ -n "$$files" ]; then \
		echo "gofmt: these files are not formatted (run gofmt -w):"; \
		echo "$$files"; \
		exit 1; \
	fi

# Built with the binary's profile (below), so that the figures are those
# of the fgcheck that users run.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -pgo=$(CURDIR)/cmd/fgcheck/default.pgo ./...

# Instructions each benchmark problem's exploration executes (one worker),
# counted by valgrind's cachegrind: a figure that does not move with the
# host, where seconds on a shared VM move by a third within minutes. The
# collector is off and the runtime on one thread, so that the count is the
# explorer's own, the same to 0.05 % from run to run (docs/state-cache.md,
# "Counting instructions"). cpu.rdtscp=off: the runtime's cputicks uses
# RDTSCP, which valgrind 3.19 does not know (SIGILL, when a runtime lock is
# contended: about one run in ten, three in four with four at once).
# asyncpreemptoff: the preemption signal crashed valgrind too. Needs
# valgrind (apt-get install valgrind);
# ICOUNT_BIN compares another build, ICOUNT_PROBLEMS other problems.
ICOUNT_BIN ?= $(CURDIR)/.cache/fgcheck-icount
ICOUNT_PROBLEMS ?= --scenario=peer-spin,-C=2,--scenario=peer-spin -K=3
icount:
	@command -v valgrind >/dev/null || { echo "icount: valgrind is not installed (apt-get install valgrind)"; exit 2; }
	@if [ "$(ICOUNT_BIN)" = "$(CURDIR)/.cache/fgcheck-icount" ]; then mkdir -p .cache && $(GO) build -o $(ICOUNT_BIN) ./cmd/fgcheck; fi
	@probs='$(ICOUNT_PROBLEMS)'; IFS=,; for p in $$probs; do \
		IFS=' '; out=$$(GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=cachegrind --cache-sim=no \
			--cachegrind-out-file=/dev/null $(ICOUNT_BIN) explore $$p --progress off --workers 1 2>&1); \
		ir=$$(echo "$$out" | sed -n 's/.*I *refs: *//p'); \
		runs=$$(echo "$$out" | sed -n 's/.*, \([0-9]*\) schedules run for.*/\1/p'); \
		if [ -z "$$ir" ] || [ -z "$$runs" ]; then echo "icount: explore $$p did not complete under valgrind:"; echo "$$out" | tail -20; exit 1; fi; \
		printf '%-28s %16s instructions  %8s runs\n' "explore $$p" "$$ir" "$$runs"; \
	done

# The CPU profile the fgcheck binary is built with (profile-guided
# optimization: go build and go run use cmd/fgcheck/default.pgo by
# themselves). It is the explorer's eight cached benchmarks, five ops each
# (about two minutes, four on the slower AMD host: one op each left too
# few samples for the inliner, 1 % more instructions); regenerate it after
# a large change to the hot path (a stale profile only optimizes less:
# one made after the default engine changed on 7 Dec 2026 saved 0.2 %).
# docs/state-cache.md, "Profile-guided builds".
pgo:
	$(GO) test ./harness -run '^$$' -bench 'Cache$$|Lazy$$' -benchtime 5x -cpuprofile $(CURDIR)/cmd/fgcheck/default.pgo -o /dev/null

# Every fuzz target of $(FUZZ_PKGS) for $(FUZZTIME) each. Packages without
# test files are skipped; a package that has them must build.
fuzz:
	@set -e; \
	for pkg in $(FUZZ_PKGS); do \
		if ! ls $$pkg*_test.go >/dev/null 2>&1; then \
			echo "fuzz: $$pkg has no tests; skipping"; continue; \
		fi; \
		targets=$$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz' || true); \
		if [ -z "$$targets" ]; then echo "fuzz: $$pkg has no fuzz targets"; continue; fi; \
		for t in $$targets; do \
			echo "fuzz: $$pkg $$t for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg; \
		done; \
	done

# The rapid, gopter and differential property tests with $(RAPID_CHECKS)
# checks (and gopter tests) each.
props:
	$(GO) test ./properties/ -count=1 -timeout 30m -run 'TestRapid|TestGopter|TestDifferential' \
		-rapid.checks=$(RAPID_CHECKS) -gopter.tests=$(RAPID_CHECKS)

lint: vet fmtcheck
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The mutation-score table (fgcheck mutants).
mutants:
	$(GO) run ./cmd/fgcheck mutants

check: run test

# The HTML page of fgcheck replay --html checked in headless Chromium
# (e2e/, its own module: the main module does not depend on chromedp).
# Needs a Chromium or Chrome binary at $(CHROMIUM) (apt-get install -y
# chromium); skips without it, fails without it when FGCHECK_E2E_REQUIRE
# is set (CI). Screenshots and the page go to e2e/out/.
E2E_FILE ?= corpus/kernel-irq-push-over-discarded-tail-frame-stale-retp.txt
E2E_LANES ?= 3
CHROMIUM ?= /usr/bin/chromium
e2e:
	mkdir -p e2e/out
	$(GO) build -o e2e/out/fgcheck ./cmd/fgcheck
	e2e/out/fgcheck replay --strict --trace=false --html e2e/out/page.html $(E2E_FILE)
	cd e2e && $(GO) test -count=1 -v -run '^TestPage$$' . -args -page out/page.html -out out -lanes $(E2E_LANES) -chromium $(CHROMIUM)

kernel:
	@test -f $(KERNEL_TARBALL) || { echo "make kernel: no $(KERNEL_TARBALL) (apt-get install linux-source-6.12, or KERNEL_TARBALL=...)"; exit 2; }
	mkdir -p $(KERNEL_DIR)
	tar -xJf $(KERNEL_TARBALL) -C $(KERNEL_DIR) --strip-components=1 $(addprefix linux-source-6.12/,$(KERNEL_FILES))
	@echo "kernel tree: $(KERNEL_DIR) (FGCHECK_KERNEL=$(KERNEL_DIR) fgcheck explore --kernel ...)"

clean:
	rm -rf fgcheck-out e2e/out
	$(GO) clean ./...
