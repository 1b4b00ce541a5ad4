# fit --rent's price table (src/fit/price.c), built into the binary as the
# spec table and the model catalog are
LIB_OBJ += $(O)/src/fit/prices_data.o

$(O)/src/fit/prices_data.o: src/fit/prices_data.S data/prices/prices.tsv
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DPRICES_TSV_PATH='"data/prices/prices.tsv"' $<
