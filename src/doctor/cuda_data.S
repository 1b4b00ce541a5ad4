/* data/cuda/drivers.tsv, included byte for byte (see cudaver.c). */
	.section .rodata
	.balign 16
	.globl cuda_drivers_tsv, cuda_drivers_tsv_end
cuda_drivers_tsv:
	.incbin CUDA_TSV_PATH
cuda_drivers_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
