/*
 * The NVIDIA kernel module's version, as /proc/driver/nvidia/version gives
 * it: a parser of text only, shared by the NVML backend (to explain a
 * version mismatch) and doctor.
 */
#include "backend/nvml_probe.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01  ..." or
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.48.01 ...":
 * the digits and dots that start the first token after "Kernel Module"
 * that starts with a digit, on the first line. A version that does not fit
 * buf is unknown, never cut (a cut one would not match the library's).
 */
void
nvml_parse_module_version(const char *text, char *buf, size_t size, bool *open)
{
	const char *p = strstr(text, "Kernel Module");
	const char *eol = strchr(text, '\n');

	buf[0] = '\0';
	*open = false;
	if (!p || (eol && p > eol))
		return;
	*open = p >= text + 5 && !strncmp(p - 5, "Open ", 5);
	p += strlen("Kernel Module");
	while (*p && *p != '\n') {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t\n");
		if (len && *p >= '0' && *p <= '9') {
			size_t digits = strspn(p, "0123456789.");

			if (digits < size)
				snprintf(buf, size, "%.*s", (int)digits, p);
			return;
		}
		p += len;
	}
}
