/* data/prices/prices.tsv, included byte for byte (see price.c). */
	.section .rodata
	.balign 16
	.globl prices_tsv, prices_tsv_end
prices_tsv:
	.incbin PRICES_TSV_PATH
prices_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
