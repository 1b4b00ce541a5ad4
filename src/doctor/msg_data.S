/* data/messages/<family>.tsv, concatenated by the Makefile into one file, included byte for byte
   (see klog_msg.c). */
	.section .rodata
	.balign 16
	.globl doctor_msg_tsv, doctor_msg_tsv_end
doctor_msg_tsv:
	.incbin MSG_TSV_PATH
doctor_msg_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
