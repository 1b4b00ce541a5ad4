/*
 * The PTX of src/bench/kernels/ (one file per level, see gs.cu), included
 * byte for byte, each followed by a NUL: cuModuleLoadData takes the text as
 * a C string (see ptx.c).
 */
	.section .rodata
	.balign 16
	.globl gs_ptx_sm75, gs_ptx_sm80, gs_ptx_sm89
gs_ptx_sm75:
	.incbin GS_SM75_PTX
	.byte 0
	.balign 16
gs_ptx_sm80:
	.incbin GS_SM80_PTX
	.byte 0
	.balign 16
gs_ptx_sm89:
	.incbin GS_SM89_PTX
	.byte 0
	.section .note.GNU-stack,"",@progbits
