/*
 * gpuscope --demo: the real code path on a simulated 8-GPU server. The fake
 * NVIDIA driver library of the test suite, its demo scenario and a matching
 * /proc tree are carried inside the binary and unpacked into a private
 * temporary directory that is removed at exit.
 */
#ifndef GPUSCOPE_DEMO_H
#define GPUSCOPE_DEMO_H

struct gs_config;

/* Unpack the demo and point cfg at it; prints the reason and returns < 0 on failure. */
int demo_setup(struct gs_config *cfg);

#endif
