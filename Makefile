# slowstart-lab entry points.  Every target installs what it needs.
#
# The two commands (README.md)
#   make reproduce-table1  E7, the SUSS paper's Table 1 beside the paper's values (the main job)
#   make test              what CI runs: import contracts, kernel-core tests, the docs site (strict), unit and
#                          integration tests
#
# Experiments: one file each in experiments/, its name the target (table: README.md; a new file is a new target)
#   make startup  E1   make wifi  E2   make dynamics  E3   make fct-vs-size  E4/E5   make fairness  E6
#   make reproduce-table1  E7   make astart  E8   make blitzstart  E9   make search  E10
#   and the rest of experiments/ (the list at the end), e.g. table1-calibrate
# Each takes REPS= (repetitions), SELECT= (parts by name, tag or setting value; LINKS=, VARIANTS=, SETTINGS= say
# the same), JOBS=, AGAIN=1, SET="path=value ..." (any field of its scenarios: SET=bottleneck.rate=20mbit) and
# the names its file declares for fields (make startup RTT=25ms BUF=2BDP); the knobs SUSS_VERSION=, HOSTS=,
# LANS=, SENDER_QDISC=, OFFLOADS=, SOCKET_BUFFERS=; where it runs: BACKEND=, SUBSTRATE=, ACCEL=, CLOCK=, INVENTORY=, SERIAL=,
# CONTAINER=, HOST_TIMEOUT=, SLURM=1 (SLURM_ARGS=, SLURM_CELLS=, SLURM_POLL=); its kernel: KERNEL_SOURCE=, KERNEL_PATCHES=dir, MODULES=dir (docs/own-algorithm.md).
# Matrices take ITER=, CCA=, BUF=, RTT= (reproduce-table1 also LAYOUT=, FIRST_START=; table1-calibrate
# LARGE_SIZE=, SMALL_RTTS=, NETEM=), BOOT_SHARE= (UML: repetitions of a setting per boot, default 10) and
# KERNELS="6.1 7.3 6.1,patches=dir" (the same cells on several kernels, side by side).
#   make matrix MATRIX=smoke   any matrix by its name (an experiment's, or a file in experiments/scenarios/)
#
# Results
#   make report RUN=DIR    rebuild a run's tables and plots from its archive (ARTIFACT=results/<matrix>/<id>:
#                          a matrix's)
#   make claims            every paper's claims, each with our verdict from the archives (LEDGER=)
#   make compare A= B=     two sets of results side by side, each difference against the 95 % CIs
#   make verify ARTIFACT=  rerun a sample (SAMPLE=, 3) of a matrix's cells: the same bytes, cell by cell?
#
# Checks of the testbed
#   make vm-check          boot the testbed VM and print its self-check (JSON)
#   make oracle            our CUBIC against the kernel's, ACK by ACK (ORACLE= scenarios of kernel/tests/oracle/)
#   make suss-loop         SUSS 2024 in closed loop on its authors' path, round by round beside their log
#   make crosscheck        E1 on UML and on QEMU -icount, side by side (REPS=2)
#   make fresh-check       the README's two commands in a throw-away Debian root with an empty cache
#   make bench BENCH=      a benchmark (kept out of the tests: docs/reference.md)
#   make soak              a matrix run twice, once under FAULTS= faults drawn from SEED=, compared cell by
#                          cell (SOAK="run reproduce-table1 --iter 10", 320 cells; SOAK_DEST= its directory; not part of make test)
#                          SOAK_CALM_FROM= an earlier soak of the same matrix whose calm run this one takes
#
# Images, containers, fleets
#   make image             build the testbed image (cached by recipe hash)
#   make image-repin       re-resolve the kernel metapackage into images/kernel.lock
#   make image-list        the image cache, and what a prune would keep (KEEP=, default 5) and why
#   make image-prune       remove images not used lately (KEEP= others kept beside the tree's own)
#   make container         the harness as a container image (container-save: into a file)
#   make fleet-up          a test fleet of FLEET_HOSTS= containers on this machine (fleet-down removes it)
#   SLURM=1 on any experiment: its cells as one Slurm job array from a login node (docs/fleets.md)
#
# Development
#   make help              this list (a bare `make` prints it too)
#   make docs              the documentation site (docs/, mkdocs.yml) into site/
#   make lint-imports      imports flow one way (pyproject.toml's contracts); lint-workflows: the CI workflows
#   make kernel-test       the kernel core's user-space tests; test-unit, test-vm: the two halves of make test
#   make deps              host packages and the Python environment (host-deps, python-deps; engine-deps,
#                          docker-deps, browser-deps, slurm-deps, test-deps: what some tests need); clean-venv
#                          removes .venv
#
# Rerunning an experiment runs only what is missing (a matrix's cells, a series' parts without a finished
# run): a Ctrl-C loses nothing finished.  SUBSTRATE=uml (default: User-Mode Linux in virtual time), vm (QEMU;
# ACCEL=auto|kvm|tcg, CLOCK=real|virtual) or native; BACKEND=mininet, netns or containerlab builds the topology.

SHELL := /bin/bash
# A bare `make` lists the targets; it installs nothing.
.DEFAULT_GOAL := help
PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
# This checkout's code, whichever checkout's environment installed the package (its editable
# install names one tree's runners/: a second checkout sharing the environment ran the first's).
export PYTHONPATH := $(CURDIR)/runners$(if $(PYTHONPATH),:$(PYTHONPATH))
SUBSTRATE ?= uml
ACCEL ?= auto
CLOCK ?= real
SUBSTRATE_ARGS = --substrate $(SUBSTRATE) --accel $(ACCEL) --clock $(CLOCK)
REPS ?=
SCENARIO ?=
INVENTORY ?=
MATRIX ?= smoke
# The knobs over every experiment's scenarios, one row each in runners/sslab/scenario/knobs.py
# (`python -m sslab run --help` says what each takes): SUSS_VERSION=2024|2025|0, the version cubic_suss
# runs; HOSTS=ideal|1gbe|logging, the host model; LANS=veth|ovs, the dumbbell's LANs; OFFLOADS=off|linux|linux-N,
# the hosts' segmentation offloads; SOCKET_BUFFERS=raised|linux|linux-senders, their TCP socket buffers (each
# passed as NAME=value, so that a matrix sweeping one narrows its axis by it).  The line below is
# that table's make_line(); tests/unit/test_knobs.py holds it to the table.
KNOB_ARGS = $(if $(SUSS_VERSION),--set SUSS_VERSION=$(SUSS_VERSION)) $(if $(HOSTS),--set HOSTS=$(HOSTS)) $(if $(LANS),--set LANS=$(LANS)) $(if $(SENDER_QDISC),--set SENDER_QDISC=$(SENDER_QDISC)) $(if $(OFFLOADS),--set OFFLOADS=$(OFFLOADS)) $(if $(SOCKET_BUFFERS),--set SOCKET_BUFFERS=$(SOCKET_BUFFERS))
# The names passed as --set NAME=value: a matrix's axis options and the aliases experiment files declare
# (tests/unit/test_overrides.py holds every declared alias to this list); SET= takes fields by path.
SET_NAMES := CCA BUF RTT LARGE_SIZE SMALL_RTTS NETEM LAYOUT FIRST_START
SET_ARGS = $(foreach v,$(SET_NAMES),$(if $($(v)),--set $(v)=$($(v)))) $(foreach s,$(SET),--set $(s))
MATRIX_ARGS = $(KNOB_ARGS) $(if $(ITER),--iter $(ITER)) $(SET_ARGS) \
              $(if $(INVENTORY),--inventory $(INVENTORY)) $(if $(SERIAL),--serial $(SERIAL)) \
              $(if $(JOBS),--jobs $(JOBS)) $(if $(CONTAINER),--container $(CONTAINER)) $(SUBSTRATE_ARGS) \
              $(if $(BACKEND),--backend $(BACKEND)) $(if $(BOOT_SHARE),--boot-share $(BOOT_SHARE)) $(KERNEL_ARGS) \
              $(if $(HOST_TIMEOUT),--host-timeout $(HOST_TIMEOUT)) $(SLURM_RUN_ARGS)

# SLURM=1: the cells as one Slurm job array, submitted from this login node and followed (docs/fleets.md,
# "On a Slurm cluster"); SLURM_ARGS="--partition=... --time=..." goes to sbatch as written, SLURM_CELLS=
# cells a task (default: a boot), SLURM_POLL= seconds between looks at the queue (default 30).
SLURM_RUN_ARGS = $(if $(filter-out 0,$(SLURM)),--slurm) $(if $(SLURM_ARGS),'--slurm-args=$(SLURM_ARGS)') \
                 $(if $(SLURM_CELLS),--slurm-cells $(SLURM_CELLS)) $(if $(SLURM_POLL),--slurm-poll $(SLURM_POLL))

# A researcher's kernel (docs/own-algorithm.md): KERNEL_SOURCE=name, another Debian
# kernel source (images/uml/sources/<name>.yaml; default 6.1); KERNEL_PATCHES=dir, a patch series
# applied to the UML kernel's source after ours; MODULES=dir, an out-of-tree module built against
# it and loaded in every boot.  All go into the image's recipe hash.
# KERNELS="6.1 7.3 6.1,patches=DIR": a matrix's kernel axis, the same cells on each, side by side.
KERNEL_ARGS = $(foreach k,$(KERNELS),--kernel $(k))
ifneq ($(KERNEL_SOURCE),)
export SSLAB_KERNEL_SOURCE := $(KERNEL_SOURCE)
endif
ifneq ($(KERNEL_PATCHES),)
export SSLAB_KERNEL_PATCHES := $(abspath $(KERNEL_PATCHES))
endif
ifneq ($(MODULES),)
export SSLAB_MODULES := $(abspath $(MODULES))
endif

# The experiments: experiments/<target>.yaml, each run by `sslab run` (what applies to its kind).
EXPERIMENTS := $(sort $(basename $(notdir $(wildcard experiments/*.yaml))))
RUN_ARGS = $(KNOB_ARGS) $(foreach v,SELECT LINKS VARIANTS SETTINGS,$(if $($(v)),--select $($(v)))) \
           $(if $(REPS),--reps $(REPS)) $(if $(JOBS),--jobs $(JOBS)) $(if $(SCENARIO),--scenario $(SCENARIO)) \
           $(if $(AGAIN),--again) \
           $(if $(BACKEND),--backend $(BACKEND)) $(if $(ITER),--iter $(ITER)) \
           $(SET_ARGS) $(if $(INVENTORY),--inventory $(INVENTORY)) \
           $(if $(SERIAL),--serial $(SERIAL)) $(if $(CONTAINER),--container $(CONTAINER)) $(if $(BOOT_SHARE),--boot-share $(BOOT_SHARE)) $(SUBSTRATE_ARGS) \
           $(KERNEL_ARGS) $(if $(HOST_TIMEOUT),--host-timeout $(HOST_TIMEOUT)) $(SLURM_RUN_ARGS)

# Host programs and the Debian packages that provide them.  ssh and ssh-keygen: the controller reaches a
# matrix's hosts over ssh (Ansible), and the test fleet's key is made with ssh-keygen; a new machine has
# neither (make fresh-check's make test, 27 Nov 2026: the fleet tests' fixture failed on ssh-keygen).
HOST_TOOLS := qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils debootstrap:debootstrap \
              mke2fs:e2fsprogs ip:iproute2 tc:iproute2 iperf3:iperf3 ping:iputils-ping \
              ethtool:ethtool tcpdump:tcpdump gcc:gcc git:git taskset:util-linux strip:binutils patch:patch xz:xz-utils \
              pgrep:procps tshark:tshark ssh:openssh-client ssh-keygen:openssh-client
# Host files and their packages: the C library's headers, for the kernel core's user-space tests
# (gcc without recommends has none: a fresh machine's `make test` stopped at stdio.h).
HOST_FILES := /usr/include/stdio.h:libc6-dev

.PHONY: soak slurm-deps help deps host-deps python-deps engine-deps browser-deps image image-repin image-list image-prune compare verify docs container container-save fleet-up fleet-down docker-deps test-deps vm-check report claims test test-unit test-vm kernel-test clean-venv lint-imports lint-workflows \
        matrix crosscheck oracle suss-loop bench fresh-check $(EXPERIMENTS)

help:
	@sed -n '2,/^$$/p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'
	@echo "Experiments here (experiments/*.yaml): $(EXPERIMENTS)"

# What a run needs here: everything (the image's build tools among them), but on a Slurm login node
# (SLURM=1), where a user has no root to install with, only the Python environment: the image is
# already in the shared cache, and a UML run needs nothing else installed (util-linux's taskset and
# setpriv, which the substrate checks itself).
RUN_DEPS = $(if $(filter-out 0,$(SLURM)),python-deps,deps)
$(EXPERIMENTS): $(RUN_DEPS)
	$(VPY) -m sslab run experiments/$@.yaml $(RUN_ARGS)

deps: host-deps python-deps

# In the container (SSLAB_IN_CONTAINER) everything the UML substrate needs is already there.
host-deps:
	@[ -n "$$SSLAB_IN_CONTAINER" ] && exit 0; \
	missing=""; for pair in $(HOST_TOOLS); do tool=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$tool >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	for pair in $(HOST_FILES); do file=$${pair%%:*}; pkg=$${pair##*:}; \
	  [ -e $$file ] || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install$$missing" >&2; exit 1; fi; \
	  $(call APT_INSTALL,$$missing); \
	fi

# Debian packages installed with their output in a log: a line on the console, the log's end and its
# path if apt-get fails.  $(call APT_INSTALL,packages) in a recipe's shell (root already checked).  The
# directory is the image build's too (sslab.substrate.buildtools.step_log).
LOGS_DIR := $(or $(SSLAB_LOGS),$(or $(TMPDIR),/tmp)/sslab-logs-$(shell id -u))
APT_INSTALL = log=$(LOGS_DIR)/apt-$$(date -u +%Y%m%dT%H%M%SZ)-$$$$.log; mkdir -p $(LOGS_DIR); \
  echo "installing Debian packages: $$(echo $(1)) (their output: $$log)"; \
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(1); } \
    >$$log 2>&1 || { tail -n 25 $$log >&2; echo "error: apt-get could not install $$(echo $(1)) (all of its output: $$log)" >&2; false; }

$(VENV)/.stamp: pyproject.toml
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "error: Python >= 3.11 needed" >&2; exit 1; }
	@$(PY) -m venv $(VENV) 2>/dev/null || { $(call APT_INSTALL,python3-venv) && $(PY) -m venv $(VENV); }
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[test,docs]'
	@touch $@

python-deps: $(VENV)/.stamp

image: deps
	$(VPY) -m sslab image build

# A container engine that works (`podman info` / `docker info` answer; a Docker client without a
# daemon does not count): if none does, Debian's podman and runc are installed, then checked again.
engine-deps: python-deps
	@$(VPY) -m sslab container engine >/dev/null 2>&1 || { \
	  echo "$$($(VPY) -m sslab container engine 2>&1 | tail -n 1 | sed 's/^error: //'); installing podman"; \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install podman" >&2; exit 1; fi; \
	  $(call APT_INSTALL,podman runc) && \
	  $(VPY) -m sslab container engine; }

# The testbed as an OCI image for Podman or Docker (builds `make image` first), and its archive.
container: deps engine-deps
	$(VPY) -m sslab container build

container-save: container
	$(VPY) -m sslab container save

# A test fleet on this machine (playbooks/README.md): FLEET_HOSTS= containers (default 3) reachable only over
# ssh, FLEET_DOCKER= of them (default 1) under Docker (installs Debian's docker.io), the rest under Podman.
# Then: make reproduce-table1 INVENTORY=$$(.venv/bin/python -m sslab fleet inventory)
fleet-up: deps engine-deps $(if $(filter 0,$(FLEET_DOCKER)),,docker-deps)
	$(VPY) -m sslab fleet up --hosts $(or $(FLEET_HOSTS),3) --docker $(or $(FLEET_DOCKER),1)

fleet-down: deps
	$(VPY) -m sslab fleet down

# Docker's engine (Debian's docker.io: dockerd), for the fleet's Docker host and the Docker test; the
# harness starts dockerd when it is not running (substrate/testfleet.py).
docker-deps:
	@command -v dockerd >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install docker.io" >&2; exit 1; fi; \
	  $(call APT_INSTALL,docker.io); }

image-repin: deps
	$(VPY) -m sslab image repin

# The image cache (~/.cache/sslab): what it holds and what a prune keeps (image-list), or the prune
# itself (image-prune; KEEP= other images kept beside the tree's own and those in use).  A build
# prunes by itself when the disk runs short (runners/sslab/substrate/cachegc.py).
image-list: deps
	$(VPY) -m sslab image list $(if $(KEEP),--keep $(KEEP))

image-prune: deps
	$(VPY) -m sslab image prune $(if $(KEEP),--keep $(KEEP))

vm-check: deps
	$(VPY) -m sslab vm-check $(SUBSTRATE_ARGS)

# E1 on UML (virtual time, infinitely fast CPUs) and on QEMU -icount (virtual time, CPU costs guest time).
# Our CUBIC against the kernel's own, ACK by ACK (kernel/README.md, "the kernel as the oracle"):
# every scenario of kernel/tests/oracle/, or ORACLE="e1 table1-cell" (names or paths).
oracle: deps
	$(VPY) -m sslab oracle $(ORACLE) $(if $(JOBS),--jobs $(JOBS))

# SUSS 2024 in closed loop on its authors' path, each round beside their log (kernel/README.md).
suss-loop: deps
	$(VPY) -m sslab suss-loop

crosscheck: deps
	$(VPY) -m sslab crosscheck --scenario $(or $(SCENARIO),experiments/scenarios/e1-startup.yaml) $(if $(REPS),--reps $(REPS)) $(if $(HOSTS),--hosts $(HOSTS))

# The README's two commands on a new machine: a throw-away Debian root (debootstrap) with only make,
# git and python3, an empty cache and this machine's Docker client if any; make $(FRESH_MAIN), then
# make test; logs and times in results/fresh-check/.  FRESH_KEEP=1 keeps the root.  It refuses to start
# with less than about 50 GB free where the cache is (FRESH_NEED_GB= to ask for another amount).
FRESH_MAIN ?= reproduce-table1
fresh-check: deps
	$(VPY) -m sslab fresh-check --main "$(FRESH_MAIN)" $(if $(FRESH_KEEP),--keep) $(if $(FRESH_NEED_GB),--need-gb $(FRESH_NEED_GB))

# Wall-clock benchmarks of the substrates (not tests: timings depend on the machine).
# BENCH=umlperf samples the host with perf: installed here when missing (Debian's linux-perf).
bench: deps
	$(if $(findstring umlperf,$(BENCH)),@command -v perf >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] || \
	  { echo "error: BENCH=umlperf needs perf (linux-perf) and root to install it" >&2; exit 1; }; \
	  $(call APT_INSTALL,linux-perf); })
	$(VPY) runners/benchmarks.py $(BENCH) $(if $(BASE),--base $(BASE))

# A sample of an archived matrix's cells run again, each compared byte for byte: ARTIFACT=, SAMPLE=.
verify: deps
	@if [ -z "$(ARTIFACT)" ]; then echo "usage: make verify ARTIFACT=results/<matrix>/<selection> [SAMPLE=3]" >&2; exit 2; fi
	$(VPY) -m sslab verify $(ARTIFACT) $(if $(SAMPLE),--sample $(SAMPLE))

# Two sets of results side by side: A= and B= (a report's, a results directory or a run's).
compare: python-deps
	@if [ -z "$(A)" ] || [ -z "$(B)" ]; then echo "usage: make compare A=results/... B=results/..." >&2; exit 2; fi
	$(VPY) -m sslab compare $(A) $(B)

report: python-deps
	@if [ -n "$(ARTIFACT)" ]; then $(VPY) -m sslab matrix report $(ARTIFACT); \
	elif [ -n "$(RUN)" ]; then $(VPY) -m sslab report $(RUN); \
	else echo "usage: make report ARTIFACT=results/<matrix>/<id>  or  make report RUN=results/startup/latest" >&2; exit 2; fi

# A paper's claims ledger (experiments/claims/<LEDGER>.yaml: suss, the default; astart; blitzstart): each claim's verdict from the
# archives under results/, into results/claims/<LEDGER>/.
# The soak: kept out of make test (an hour and more); docs/faults.md.
soak: $(RUN_DEPS)
	$(VPY) -m sslab soak --seed $(or $(SEED),1) --faults $(or $(FAULTS),40) $(if $(SOAK_DEST),--dest $(SOAK_DEST)) $(if $(SOAK_CALM_FROM),--calm-from $(SOAK_CALM_FROM)) -- $(or $(SOAK),run reproduce-table1 --iter 10)

claims: python-deps
	$(VPY) -m sslab claims $(or $(LEDGER),suss)

# Any matrix through Ansible (ansible-core comes with the Python deps).
matrix: $(RUN_DEPS)
	$(VPY) -m sslab matrix run $(MATRIX) $(MATRIX_ARGS)

kernel-test: host-deps
	$(MAKE) -C kernel test

test-unit: deps lint-imports
	$(VPY) -m pytest -q tests/unit

test-vm: deps
	$(VPY) -m pytest -q tests/integration

# Imports flow one way (pyproject.toml's contracts): a back-import or a cycle fails here.
lint-imports: python-deps
	$(VENV)/bin/lint-imports --no-cache

# The hosted-CI workflow files (.github/workflows/, docs/ci.md): actionlint, built from Go's module proxy
# (sslab.cli.workflowlint: with this machine's Go, or Go's own toolchain from the same proxy), with
# Debian's shellcheck on every `run:` script.
lint-workflows: python-deps
	@command -v shellcheck >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install shellcheck" >&2; exit 1; fi; \
	  $(call APT_INSTALL,shellcheck); }
	$(VPY) -m sslab.cli.workflowlint

# The container integration tests need an engine that works (engine-deps), and Docker's (docker-deps);
# the report pages are opened in Debian's headless Chromium (browser-deps).
test-deps: engine-deps docker-deps browser-deps slurm-deps

# Debian's Slurm (slurmctld, slurmd, the client commands) and munge: the one-node cluster that
# tests/integration/test_slurm.py starts and stops itself (SLURM=1 itself needs only a cluster's client
# commands, on its login node).  Debian's python3-venv for the test user's own Python environment.
slurm-deps:
	@{ command -v sbatch && command -v slurmd && command -v slurmctld && command -v munged \
	   && /usr/bin/python3 -c 'import ensurepip'; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install slurm" >&2; exit 1; fi; \
	  $(call APT_INSTALL,slurmctld slurmd slurm-client munge python3-venv); }

browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" != 0 ]; then echo "error: need root to install chromium" >&2; exit 1; fi; \
	  $(call APT_INSTALL,chromium); }

test: deps kernel-test lint-imports lint-workflows docs test-deps
	$(VPY) -m pytest -q tests

# The documentation site (mkdocs.yml, docs/) into site/, strictly: a broken link, a lost anchor or a page
# missing from nav fails the build, and with it `make test`.
docs: python-deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean-venv:
	rm -rf $(VENV)
