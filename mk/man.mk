# The manual page of every command, gpuscope-NAME(1) (man gpuscope-fit), printed
# by the binary from its table of commands and options (src/cmd/cli.h,
# src/cmd/manpage.c), so that a page cannot say other than what the command
# takes; man/gpuscope.1 stays the hand-written overview. Remade whenever the
# binary is, all at once: which pages there are is the table's to say
# ('gpuscope __man --list'), so one stamp stands for them.
#
#   MAN_STAMP   the stamp: depend on it
#   MAN_PAGES   the pages' paths, for a recipe of a target that depends on MAN_STAMP
#               (it runs the binary, so it is empty before the binary is built)
#
# The pages' date is SOURCE_DATE_EPOCH's when it is set (a package's build sets it
# to its changelog's date), else the release's: the same tree makes the same pages.
MAN_DIR := $(O)/man
MAN_STAMP := $(MAN_DIR)/.stamp
MAN_PAGES = $(addprefix $(MAN_DIR)/,$(addsuffix .1,$(shell $(BIN) __man --list 2>/dev/null)))

all: $(MAN_STAMP)

$(MAN_STAMP): $(BIN)
	@mkdir -p $(MAN_DIR)
	rm -f $(MAN_DIR)/gpuscope-*.1 $(MAN_DIR)/*.tmp $@
	@set -e; pages=$$($(BIN) __man --list); test -n "$$pages"; \
	for p in $$pages; do \
		$(BIN) __man $$p >$(MAN_DIR)/$$p.1.tmp; \
		mv $(MAN_DIR)/$$p.1.tmp $(MAN_DIR)/$$p.1; \
	done; \
	echo "$(MAN_DIR): $$(echo $$pages | wc -w) pages"
	touch $@
