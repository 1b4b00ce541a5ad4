/* data/nvidia/xid.tsv, included byte for byte (see klog_nvidia.c). */
	.section .rodata
	.balign 16
	.globl nvidia_xid_tsv, nvidia_xid_tsv_end
nvidia_xid_tsv:
	.incbin XID_TSV_PATH
nvidia_xid_tsv_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
