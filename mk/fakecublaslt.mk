# The fake libcublasLt.so.13 of the tests (tests/fakecublaslt/, docs/fake-cuda.md's
# last section): cuBLASLt's entry points that bench uses, its GEMMs computed on
# the CPU over the fake libcuda.so.1's memory and streams. Built like the fake
# libcuda (its own soname, no sanitizer runtime, only the API exported).
FAKECUBLASLT_SRC := tests/fakecublaslt/lt.c
FAKECUBLASLT_OBJ := $(FAKECUBLASLT_SRC:%.c=$(O)/fakecublaslt/obj/%.o)
FAKECUBLASLT_LIB := $(O)/fakecublaslt/libcublasLt.so.13
# what the toolkit's link-time stub looks like to a loader (bench must refuse it)
FAKECUBLASLT_STUB := $(O)/fakecublaslt/stubs/libcublasLt.so.13

# the ABI check, where the toolkit's header is
CUBLASLT_H ?= /usr/local/cuda/include/cublasLt.h
FAKECUBLASLT_ABI := $(if $(wildcard $(CUBLASLT_H)),$(O)/fakecublaslt/abi_check.o)

all: $(FAKECUBLASLT_LIB) $(FAKECUBLASLT_STUB) $(FAKECUBLASLT_ABI)

$(O)/fakecublaslt/obj/%.o: %.c tests/fakecublaslt/lt_abi.h
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Itests/fakecublaslt $(FAKE_CFLAGS) -c -o $@ $<

$(FAKECUBLASLT_LIB): $(FAKECUBLASLT_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libcublasLt.so.13 -Wl,--no-undefined -o $@ $^ -ldl -lpthread -lm

$(FAKECUBLASLT_STUB): $(FAKECUBLASLT_LIB)
	@mkdir -p $(@D)
	cp $< $@

$(O)/fakecublaslt/abi_check.o: tests/fakecublaslt/abi_check.c tests/fakecublaslt/lt_abi.h \
		$(CUBLASLT_H)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -isystem $(dir $(CUBLASLT_H)) -Itests/fakecublaslt -std=gnu11 $(WARN) \
		-c -o $@ $<
