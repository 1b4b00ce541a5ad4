/* data/models/models.tsv, included byte for byte (see models.c). */
	.section .rodata
	.balign 16
	.globl models_tsv, models_tsv_end
models_tsv:
	.incbin MODELS_TSV_PATH
models_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
