/*
 * The demo's payload: the fake libnvidia-ml.so.1, its scenario and the
 * /proc bundle, included byte for byte (see src/cmd/demo.c).
 */
	.section .rodata
	.balign 16
	.globl demo_fake_lib, demo_fake_lib_end
demo_fake_lib:
	.incbin FAKE_LIB_PATH
demo_fake_lib_end:
	.balign 16
	.globl demo_scenario, demo_scenario_end
demo_scenario:
	.incbin DEMO_SCENARIO_PATH
demo_scenario_end:
	.balign 16
	.globl demo_proc, demo_proc_end
demo_proc:
	.incbin DEMO_PROC_PATH
demo_proc_end:
	.section .note.GNU-stack,"",@progbits
