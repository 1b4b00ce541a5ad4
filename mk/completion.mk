# The shells' completion scripts, printed by the binary from its table of commands
# and options (src/cmd/cli.h, src/cmd/completion.c): bash's, zsh's (_gpuscope, for a
# directory of $fpath) and fish's. Remade whenever the binary is.
COMPLETIONS := $(O)/completions/gpuscope.bash $(O)/completions/_gpuscope \
	$(O)/completions/gpuscope.fish

all: $(COMPLETIONS)

$(O)/completions/gpuscope.bash: $(BIN)
	@mkdir -p $(@D)
	$(BIN) completion bash >$@.tmp
	mv $@.tmp $@

$(O)/completions/_gpuscope: $(BIN)
	@mkdir -p $(@D)
	$(BIN) completion zsh >$@.tmp
	mv $@.tmp $@

$(O)/completions/gpuscope.fish: $(BIN)
	@mkdir -p $(@D)
	$(BIN) completion fish >$@.tmp
	mv $@.tmp $@
