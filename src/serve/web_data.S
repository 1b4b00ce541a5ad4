/* data/web/index.html, the page of gpuscope serve, included byte for byte. */
	.section .rodata
	.balign 16
	.globl gpuscope_web_html, gpuscope_web_html_end
gpuscope_web_html:
	.incbin WEB_HTML_PATH
gpuscope_web_html_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
