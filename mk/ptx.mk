# The NVIDIA kernels: src/bench/kernels/gs.cu, compiled to one PTX file per
# feature level by `make ptx` (needs nvcc) and committed, so that the build
# itself needs no CUDA toolkit: ptx_data.S includes the committed files into
# the binary (bench/ptx.c picks one per device). scripts/check-ptx.sh
# regenerates them to compare and assembles each with ptxas.
#
#   make ptx                  regenerate src/bench/kernels/gs_sm*.ptx
#   make ptx PTX_DIR=DIR      write them to DIR instead (the check's use)
#   make ptx NVCC=/path/nvcc  another nvcc than the one on PATH or in
#                             /usr/local/cuda/bin
#
# The .ptx files have no rule of their own on purpose: a build after a
# checkout that leaves gs.cu newer than them must not go looking for nvcc.

# the levels (GS_SM) and the lowest PTX ISA version each file's
# instructions need (why each: gs.cu's header comment); nvcc 13 writes 9.0,
# which only R580 drivers read
PTX_LEVELS := 75 80 89
PTX_ISA_75 := 6.3
PTX_ISA_80 := 7.0
PTX_ISA_89 := 8.4
PTX_SRC := src/bench/kernels/gs.cu
PTX_FILES := $(PTX_LEVELS:%=src/bench/kernels/gs_sm%.ptx)
PTX_DIR ?= src/bench/kernels
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc)
# no fast math, no contraction nvcc chooses: gs.cu writes every fused step
# itself, so the host can recompute the FMA chains bit for bit. No -lineinfo
# or -G: the files then carry no paths (nor dates: nvcc writes none).
PTX_NVCC_FLAGS := -ptx -ftz=false -prec-div=true -prec-sqrt=true -fmad=false

.PHONY: ptx
ptx:
	@command -v "$(NVCC)" >/dev/null 2>&1 || { echo "make ptx: no nvcc at $(NVCC) (the CUDA toolkit; NVCC=/path/to/nvcc)" >&2; exit 1; }
	@mkdir -p $(PTX_DIR)
	@set -e; for l in $(PTX_LEVELS); do \
		case $$l in 75) v=$(PTX_ISA_75) ;; 80) v=$(PTX_ISA_80) ;; 89) v=$(PTX_ISA_89) ;; esac; \
		out=$(PTX_DIR)/gs_sm$$l.ptx; \
		echo "nvcc compute_$$l -> $$out (.version $$v)"; \
		"$(NVCC)" $(PTX_NVCC_FLAGS) -arch=compute_$$l -DGS_SM=$$l -o $$out.tmp $(PTX_SRC); \
		test "$$(grep -c '^\.version ' $$out.tmp)" = 1 || { echo "$$out: not one .version line" >&2; exit 1; }; \
		sed "s/^\.version .*/.version $$v/" $$out.tmp > $$out.tmp2; \
		rm -f $$out.tmp; mv $$out.tmp2 $$out; \
	done

# the PTX inside the library, each file NUL-terminated
LIB_OBJ += $(O)/src/bench/ptx_data.o
$(O)/src/bench/ptx_data.o: src/bench/ptx_data.S $(PTX_FILES)
	@mkdir -p $(@D)
	$(CC) -c -o $@ -DGS_SM75_PTX='"src/bench/kernels/gs_sm75.ptx"' \
		-DGS_SM80_PTX='"src/bench/kernels/gs_sm80.ptx"' \
		-DGS_SM89_PTX='"src/bench/kernels/gs_sm89.ptx"' $<
