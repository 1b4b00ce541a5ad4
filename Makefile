# gpuscope build. GNU make, gcc or clang, the C library and ncursesw (for
# 'gpuscope top'; Debian: libncurses-dev, found through pkg-config when it is
# there): nothing else is needed to build (see docs/design.md for why not
# Meson). 'make run' and 'make check' install what is missing.
#
#   make            build build/gpuscope, the fake NVML libraries and the tests
#   make run        install missing build dependencies, build, run gpuscope
#                   (the demo, with a note, when this machine has no GPU)
#   make check      install missing dependencies, build, run the whole suite
#   make SAN=1      the same, built with AddressSanitizer and UBSan (in build-san/)
#   make WERROR=1   warnings are errors (CI)
#   make install    PREFIX=/usr/local, DESTDIR; make uninstall removes the same set
#   make deb        the Debian package, in build/deb/ (README.md, Install)

CC ?= cc
PREFIX ?= /usr/local
O ?= build
ifeq ($(SAN),1)
O := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

VERSION := 0.1.0
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
	-Wwrite-strings -Wpointer-arith -Wcast-qual -Wundef -Wvla -Wformat=2 \
	-Wimplicit-fallthrough -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -DGPUSCOPE_VERSION='"$(VERSION)"' -Isrc
CFLAGS += -std=gnu11 $(OPT) $(WARN) $(SANFLAGS) -MMD -MP
# Each object keeps its own string literals: merged, the linker stores a string
# inside the longest one it ends (" status" inside doctor's "fabric.status"), so
# reading it maps a page of another command's text (docs/performance.md, top).
CFLAGS += -fno-merge-constants
LDFLAGS += $(SANFLAGS)
LIBS := -ldl -lpthread -lm
# ncursesw for the full-screen interface (src/tui/, gpuscope top) only
NCURSES_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
# libmicrohttpd for gpuscope serve's HTTP side (src/serve/http.c) only; Debian: libmicrohttpd-dev
# for its header. It is not linked: serve dlopens libmicrohttpd.so.12 (libmicrohttpd12), so
# that GnuTLS and p11-kit, which it brings, load in serve only (docs/design.md, serve)
MHD_CFLAGS := $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
# crypt_r (libxcrypt: bcrypt) for the basic auth of serve's web configuration; Debian:
# libcrypt-dev for its header. It is not linked: webconfig.c dlopens libcrypt.so.1 (libcrypt1)
# on first use, so that no other command maps it (docs/performance.md, top's memory). The unit
# tests link it: t_webauth.c makes hashes of its own with it.
TEST_LIBS = $(LIBS) -lcrypt
# jansson reads every JSON file gpuscope reads (config.json, CUDA's version.json); Debian: libjansson-dev
JANSSON_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
JANSSON_LIBS := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
CPPFLAGS += $(JANSSON_CFLAGS)
# zlib's crc32() frames the flight recorder's records; Debian: zlib1g-dev
# SQLite keeps the job queue's state (src/queue/store.c); Debian: libsqlite3-dev
LIBS += $(JANSSON_LIBS) -lz -lsqlite3
# jansson, zlib, SQLite, ncursesw and tinfo are linked from their archives where they are installed
# (Debian's -dev packages ship them): as shared libraries they cost every command, --version
# included, their loading and symbol look-ups at start (docs/performance.md, start-up).
# STATIC_DEPS=0 links them shared.
STATIC_DEPS ?= 1
ifeq ($(STATIC_DEPS),1)
static_lib = $(if $(filter /%,$(shell $(CC) -print-file-name=lib$(1).a)),-l:lib$(1).a,-l$(1))
static_libs = $(foreach l,$(1),$(if $(filter -ljansson -lz -lsqlite3 -lncursesw -ltinfo,$(l)),$(call static_lib,$(l:-l%=%)),$(l)))
LIBS := $(call static_libs,$(LIBS))
NCURSES_LIBS := $(call static_libs,$(NCURSES_LIBS))
endif

# the layers (docs/design.md): every folder of src/ but the commands' and
# the two front ends that need ncursesw and libmicrohttpd go into one library
# that the tests link
LIB_DIRS := core backend front doctor fit record bench queue
LIB_SRC := $(sort $(wildcard $(LIB_DIRS:%=src/%/*.c)) src/serve/webconfig.c src/serve/negotiate.c)
CMD_SRC := $(sort $(wildcard src/cmd/*.c src/tui/*.c) src/serve/http.c)
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o) $(O)/src/doctor/cuda_data.o $(O)/src/doctor/xid_data.o \
	$(O)/src/doctor/msg_data.o $(O)/src/core/specs_data.o $(O)/src/fit/models_data.o
CMD_OBJ := $(CMD_SRC:%.c=$(O)/%.o)
LIB := $(O)/libgpuscope.a
BIN := $(O)/gpuscope

FAKE_SRC := $(sort $(wildcard tests/fakenvml/*.c))
FAKE_DIR := $(O)/fakenvml
FAKE_LIB := $(FAKE_DIR)/current/libnvidia-ml.so.1
FAKE_LEGACY := $(FAKE_DIR)/legacy/libnvidia-ml.so.1
FAKE_STUB := $(FAKE_DIR)/stubs/libnvidia-ml.so.1
# NOT_SUPPORTED stubs for the names of symbols.txt that FAKE_SRC does not define
FAKE_NOTSUP := $(FAKE_DIR)/notsup.c
FAKE_OBJ := $(FAKE_SRC:%.c=$(O)/fake/%.o) $(O)/fake/notsup.o
FAKE_LEGACY_OBJ := $(FAKE_SRC:%.c=$(O)/fake-legacy/%.o) $(O)/fake-legacy/notsup.o
FAKE_CFLAGS := -std=gnu11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP
# a fake library must not carry sanitizer runtimes into Python or nvitop
FAKE_LDFLAGS := -shared -Wl,-soname,libnvidia-ml.so.1 -Wl,--no-undefined

TEST_SRC := $(sort $(wildcard tests/unit/t_*.c))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(O)/tests/%)

# each part of the build with rules of its own keeps them in mk/ (the fake
# libcuda.so.1, the PTX kernels): read here, after the variables they extend
.DEFAULT_GOAL := all
include $(sort $(wildcard mk/*.mk))

DEMO_SCENARIO := data/demo/h100x8.scn
DEMO_PROC := data/demo/proc.txt

.PHONY: all run check test deps deps-check format format-check checksrc clean install demo bench
all: $(BIN) $(FAKE_LIB) $(FAKE_LEGACY) $(FAKE_STUB) $(TEST_BIN)

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/src/tui/%.o: CPPFLAGS += $(NCURSES_CFLAGS)

# doctor's table of CUDA releases and their drivers, built into the binary
$(O)/src/doctor/cuda_data.o: src/doctor/cuda_data.S data/cuda/drivers.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DCUDA_TSV_PATH='"data/cuda/drivers.tsv"' $<

# doctor's catalog of NVIDIA Xid codes (log.nvidia.xid), built into the binary
$(O)/src/doctor/xid_data.o: src/doctor/xid_data.S data/nvidia/xid.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DXID_TSV_PATH='"data/nvidia/xid.tsv"' $<

# doctor's tables of user-space and driver messages (data/messages/*.tsv, klog_msg.c),
# concatenated in name order, each after a "#file NAME" line, into one file built into the
# binary. messages.list holds the tables' names, rewritten when a table is added or removed,
# so that either rebuilds it as a change of one does.
MSG_TSV := $(sort $(wildcard data/messages/*.tsv))
MSG_LIST := $(O)/data/messages.list
$(shell mkdir -p $(O)/data && { echo '$(MSG_TSV)' | cmp -s - $(MSG_LIST) || echo '$(MSG_TSV)' >$(MSG_LIST); })
$(O)/data/messages.tsv: $(MSG_TSV) $(MSG_LIST)
	@mkdir -p $(@D)
	for f in $(MSG_TSV); do printf '#file %s\n' "$$f"; cat "$$f"; echo; done >$@.tmp
	mv $@.tmp $@

$(O)/src/doctor/msg_data.o: src/doctor/msg_data.S $(O)/data/messages.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DMSG_TSV_PATH='"$(O)/data/messages.tsv"' $<

# the GPU spec sheet (core) and fit's model catalog, built into the binary
$(O)/src/core/specs_data.o: src/core/specs_data.S data/specs/gpus.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DSPECS_TSV_PATH='"data/specs/gpus.tsv"' $<

$(O)/src/fit/models_data.o: src/fit/models_data.S data/models/models.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DMODELS_TSV_PATH='"data/models/models.tsv"' $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^

# The demo carries the fake driver library and its scenario inside the binary.
$(O)/src/cmd/demo_blob.o: src/cmd/demo_blob.S $(FAKE_LIB) $(DEMO_SCENARIO) $(DEMO_PROC)
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DFAKE_LIB_PATH='"$(FAKE_LIB)"' -DDEMO_SCENARIO_PATH='"$(DEMO_SCENARIO)"' \
		-DDEMO_PROC_PATH='"$(DEMO_PROC)"' $<

$(O)/src/serve/http.o: CPPFLAGS += $(MHD_CFLAGS)

# serve's web page, built into the binary
$(O)/src/serve/web_data.o: src/serve/web_data.S data/web/index.html
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DWEB_HTML_PATH='"data/web/index.html"' $<

# The program's layout follows the link order: top's objects first, with what
# they take from the library and from ncursesw, then the other commands and the
# rest of the library, the built-in data last. A page is mapped when any byte of
# the 64 KiB around it is read, so top, which runs for hours, maps only the
# stretch it runs from (docs/performance.md, top's memory).
TOP_OBJ := $(O)/src/cmd/main.o $(O)/src/cmd/common.o $(O)/src/cmd/top.o \
	$(filter $(O)/src/tui/%,$(CMD_OBJ))
DATA_OBJ := $(O)/src/cmd/demo_blob.o $(O)/src/serve/web_data.o
$(BIN): $(CMD_OBJ) $(DATA_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TOP_OBJ) $(LIB) $(NCURSES_LIBS) $(filter-out $(TOP_OBJ),$(CMD_OBJ)) \
		$(LIB) $(LIBS) $(DATA_OBJ)

$(O)/fake/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Isrc $(FAKE_CFLAGS) -c -o $@ $<

$(O)/fake-legacy/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -DFAKE_LEGACY -Isrc $(FAKE_CFLAGS) -c -o $@ $<

$(FAKE_NOTSUP): tests/fakenvml/gen-notsup.sh tests/fakenvml/symbols.txt $(FAKE_SRC)
	@mkdir -p $(@D)
	sh tests/fakenvml/gen-notsup.sh tests/fakenvml/symbols.txt $(FAKE_SRC) > $@.tmp
	mv $@.tmp $@

$(O)/fake/notsup.o: $(FAKE_NOTSUP)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Isrc -Itests/fakenvml $(FAKE_CFLAGS) -c -o $@ $<

$(O)/fake-legacy/notsup.o: $(FAKE_NOTSUP)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -DFAKE_LEGACY -Isrc -Itests/fakenvml $(FAKE_CFLAGS) -c -o $@ $<

$(FAKE_LIB): $(FAKE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(FAKE_LDFLAGS) -o $@ $^ -lpthread -lm

$(FAKE_LEGACY): $(FAKE_LEGACY_OBJ)
	@mkdir -p $(@D)
	$(CC) $(FAKE_LDFLAGS) -o $@ $^ -lpthread -lm

# what the CUDA toolkit's link-time stub looks like to a loader: a library
# in a stubs/ directory (gpuscope must refuse it)
$(FAKE_STUB): $(FAKE_LIB)
	@mkdir -p $(@D)
	cp $< $@

$(O)/tests/%: tests/unit/%.c $(LIB) tests/harness.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(TEST_LIBS)

deps:
	@scripts/install-deps.sh run
deps-check:
	@scripts/install-deps.sh check

run: deps
	@$(MAKE) --no-print-directory $(BIN)
	@scripts/run.sh $(BIN)

demo: $(BIN)
	$(BIN) --demo

check: deps-check
	@$(MAKE) --no-print-directory all
	@O=$(O) tests/run-tests.sh

test: all
	@O=$(O) tests/run-tests.sh

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' ':!tests/fixtures' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)
checksrc:
	@scripts/checksrc.sh

bench: all
	bench/status.sh

# make install / make uninstall: the same set of files, under $(DESTDIR)$(PREFIX)
# (README.md, Install). The systemd units are contrib/systemd/*.service with
# @bindir@ replaced as they are installed; completions and the per-command man
# pages (those of $(O)/man, after mk/man.mk's stamp) are made from the binary by
# mk/completion.mk and mk/man.mk. What a trimmed copy of the tree lacks
# (contrib/kubernetes/Containerfile copies no docs/ nor contrib/) is left out.
# uninstall removes those files, then the directories that only gpuscope's
# files were in; under a DESTDIR also the others it leaves empty.
# make deb: the Debian package (debian/), built in a copy of the tree under
# $(O)/deb/, which ends up holding gpuscope_$(VERSION)_*.deb.
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/gpuscope
DOCDIR ?= $(PREFIX)/share/doc/gpuscope
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
# Debian's zsh reads vendor-completions under /usr, site-functions under /usr/local
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
FISH_COMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
UNIT_SRC := $(sort $(wildcard contrib/systemd/*.service))
CONTRIB_FILES := $(sort $(filter-out contrib/systemd/%,$(shell find contrib -type f 2>/dev/null)))
DOC_FILES := $(strip $(wildcard README.md) $(sort $(wildcard docs/*.md)))
# the three completion scripts, where mk/completion.mk defines them: name in the tree, directory
COMPL_DEST = $(foreach f,$(COMPLETIONS),$(if $(filter %.bash,$(f)),$(BASH_COMPDIR)/gpuscope,$(if \
	$(filter %.fish,$(f)),$(FISH_COMPDIR)/gpuscope.fish,$(ZSH_COMPDIR)/_gpuscope)))
INSTALL_FILES := $(BIN) $(MAN_STAMP) $(COMPLETIONS)

.PHONY: install-files uninstall deb
install-files: $(INSTALL_FILES)

install: $(INSTALL_FILES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/gpuscope
	install -m 644 man/gpuscope.1 $(DESTDIR)$(MANDIR)/man1/gpuscope.1
	for f in $(O)/man/gpuscope-*.1; do \
		[ ! -e "$$f" ] || install -m 644 "$$f" $(DESTDIR)$(MANDIR)/man1/ || exit 1; \
	done
	set -- $(COMPL_DEST); for f in $(COMPLETIONS); do \
		install -D -m 644 "$$f" "$(DESTDIR)$$1" && shift || exit 1; \
	done
	$(if $(UNIT_SRC),install -d $(DESTDIR)$(SYSTEMD_UNITDIR))
	for f in $(UNIT_SRC); do \
		d="$(DESTDIR)$(SYSTEMD_UNITDIR)/$${f##*/}"; \
		sed 's#@bindir@#$(BINDIR)#g' "$$f" >"$$d" && chmod 644 "$$d" || exit 1; \
	done
	for f in $(CONTRIB_FILES); do \
		m=644; [ ! -x "$$f" ] || m=755; \
		install -D -m $$m "$$f" "$(DESTDIR)$(DATADIR)/$$f" || exit 1; \
	done
	$(if $(DOC_FILES),install -d $(DESTDIR)$(DOCDIR))
	$(if $(DOC_FILES),install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpuscope $(DESTDIR)$(MANDIR)/man1/gpuscope.1 \
		$(DESTDIR)$(MANDIR)/man1/gpuscope-*.1 $(COMPL_DEST:%=$(DESTDIR)%) \
		$(UNIT_SRC:contrib/systemd/%=$(DESTDIR)$(SYSTEMD_UNITDIR)/%) \
		$(CONTRIB_FILES:%=$(DESTDIR)$(DATADIR)/%) $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOC_FILES)))
	for d in $(sort $(dir $(CONTRIB_FILES:%=$(DESTDIR)$(DATADIR)/%))) $(DESTDIR)$(DOCDIR); do \
		d=$${d%/}; while case $$d in $(DESTDIR)$(DATADIR) | $(DESTDIR)$(DATADIR)/* | \
			$(DESTDIR)$(DOCDIR)) rmdir "$$d" 2>/dev/null ;; *) false ;; esac; do d=$${d%/*}; done; \
	done
	$(if $(DESTDIR),for d in $(sort $(dir $(DESTDIR)$(BINDIR)/gpuscope $(DESTDIR)$(MANDIR)/man1/x \
		$(COMPL_DEST:%=$(DESTDIR)%) $(DESTDIR)$(SYSTEMD_UNITDIR)/x $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(DOCDIR))); do \
		d=$${d%/}; while [ "$$d" != "$(DESTDIR:%/=%)" ] && rmdir "$$d" 2>/dev/null; do d=$${d%/*}; done; \
	done)

DEB_DIR := $(O)/deb
# the copy: the files git knows of, tracked or not ignored (no build folders), or outside a
# git work tree every file but those of build*/; MAKEFLAGS and O stay out of the package's make
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -co --exclude-standard | while IFS= read -r f; do [ ! -e "$$f" ] || printf '%s\n' "$$f"; done; \
	else \
		find . \( -path './build*' -o -path ./debian/gpuscope -o -path ./debian/.debhelper \) -prune -o ! -type d -print; \
	fi | tar -cf - -T - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u O -u SAN \
		DEB_BUILD_OPTIONS="nocheck $$DEB_BUILD_OPTIONS" dpkg-buildpackage -b -us -uc -jauto
	@ls $(DEB_DIR)/*.deb

clean:
	rm -rf build build-san

# (not in make deb's copy of the tree nor in tests/cli/package.sh's Debian root)
-include $(shell find $(O) \( -path $(O)/deb -o -path $(O)/pkg-root \) -prune -o -name '*.d' -type f -print 2>/dev/null)
