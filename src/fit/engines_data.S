/* data/engines/engines.tsv, included byte for byte (see engine.c). */
	.section .rodata
	.balign 16
	.globl engines_tsv, engines_tsv_end
engines_tsv:
	.incbin ENGINES_TSV_PATH
engines_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
