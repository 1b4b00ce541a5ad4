# The fake libcuda.so.1 of the tests (tests/fakecuda/, docs/fake-cuda.md):
# bench's kernels computed on the CPU at a scenario's speed. Built like the
# fake NVML (no sanitizer runtime, only the API exported), with dev.c, which
# names the kernels and their memory-test words for the PTX, the OpenCL C
# and the fake alike.
FAKECUDA_SRC := $(sort $(filter-out tests/fakecuda/abi_check.c,$(wildcard tests/fakecuda/*.c))) \
	src/bench/dev.c
FAKECUDA_OBJ := $(FAKECUDA_SRC:%.c=$(O)/fakecuda/obj/%.o)
FAKECUDA_LIB := $(O)/fakecuda/libcuda.so.1
FAKECUDA_LDFLAGS := -shared -Wl,-soname,libcuda.so.1 -Wl,--no-undefined

# the ABI check, where NVIDIA's header is: a prototype, constant or type of
# tests/fakecuda/cuda_abi.h that differs from cuda.h's fails this build
CUDA_H ?= /usr/local/cuda/include/cuda.h
FAKECUDA_ABI := $(if $(wildcard $(CUDA_H)),$(O)/fakecuda/abi_check.o)

all: $(FAKECUDA_LIB) $(FAKECUDA_ABI)

$(O)/fakecuda/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -Isrc -Itests/fakecuda $(FAKE_CFLAGS) -c -o $@ $<

$(FAKECUDA_LIB): $(FAKECUDA_OBJ)
	@mkdir -p $(@D)
	$(CC) $(FAKECUDA_LDFLAGS) -o $@ $^ -lpthread -lm

$(O)/fakecuda/abi_check.o: tests/fakecuda/abi_check.c tests/fakecuda/cuda_abi.h $(CUDA_H)
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE -D__CUDA_API_VERSION_INTERNAL -I$(dir $(CUDA_H)) -Itests/fakecuda \
		-std=gnu11 $(WARN) -c -o $@ $<
