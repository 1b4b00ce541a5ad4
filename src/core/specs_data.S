/* data/specs/gpus.tsv, included byte for byte (see specs.c). */
	.section .rodata
	.balign 16
	.globl gpu_specs_tsv, gpu_specs_tsv_end
gpu_specs_tsv:
	.incbin SPECS_TSV_PATH
gpu_specs_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
