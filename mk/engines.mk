# fit's serving-engine profiles (data/engines/engines.tsv), built into the binary
# like the model catalog (src/fit/models_data.S); read by src/fit/engine.c
LIB_OBJ += $(O)/src/fit/engines_data.o

$(O)/src/fit/engines_data.o: src/fit/engines_data.S data/engines/engines.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DENGINES_TSV_PATH='"data/engines/engines.tsv"' $<
