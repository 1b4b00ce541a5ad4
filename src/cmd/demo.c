/*
 * Unpacking the built-in demo: the fake driver library, its scenario and a
 * /proc tree for its processes go into a private directory under $TMPDIR;
 * the configuration then points at them exactly as a test would.
 *
 * The /proc bundle (data/demo/proc.txt) is a list of files, each introduced
 * by a line "@@ relative/path"; in files named "cmdline" the two characters
 * "\0" stand for a NUL byte.
 */
#include "cmd/demo.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/strbuf.h"

extern const char demo_fake_lib[], demo_fake_lib_end[];
extern const char demo_scenario[], demo_scenario_end[];
extern const char demo_proc[], demo_proc_end[];

static char demo_dir[4096];
static struct strbuf demo_paths[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void
demo_cleanup(void)
{
	if (demo_dir[0])
		nftw(demo_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	for (int i = 0; i < 4; i++)
		strbuf_release(&demo_paths[i]);
}

/* Create the parent directories of path (relative to demo_dir). */
static int
make_parents(const char *path)
{
	char buf[8192];

	str_copy(buf, sizeof(buf), path);
	for (char *p = buf + strlen(demo_dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return 0;
}

static int
write_file(const char *rel, const char *data, size_t len, mode_t mode)
{
	char path[8192];
	int fd;

	if (strstr(rel, "..")) {
		cmd_error("demo: bad path '%s' in the built-in bundle", rel);
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", demo_dir, rel) >= sizeof(path)) {
		cmd_error("demo: path too long under '%s'", demo_dir);
		return -1;
	}
	if (make_parents(path) < 0)
		goto fail;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		goto fail;
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			goto fail;
		}
		data += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0)
		goto fail;
	return 0;
fail:
	cmd_error("demo: cannot write '%s': %s", path, strerror(errno));
	return -1;
}

static int
unpack_bundle(void)
{
	const char *p = demo_proc, *end = demo_proc_end;
	struct strbuf name = STRBUF_INIT, body = STRBUF_INIT;
	int rc = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next;

		if (!nl)
			nl = end;
		if ((size_t)(nl - p) < 3 || strncmp(p, "@@ ", 3)) {
			p = nl + 1; /* text before the first header */
			continue;
		}
		strbuf_reset(&name);
		strbuf_add(&name, p + 3, (size_t)(nl - p - 3));
		strbuf_rtrim(&name);
		p = nl < end ? nl + 1 : end;
		for (next = p; next < end; next++)
			if ((next == demo_proc || next[-1] == '\n') && end - next >= 3 &&
			    !strncmp(next, "@@ ", 3))
				break;
		strbuf_reset(&body);
		if (strlen(name.buf) > 8 && !strcmp(name.buf + strlen(name.buf) - 8, "/cmdline")) {
			for (const char *q = p; q < next; q++) {
				if (q + 1 < next && q[0] == '\\' && q[1] == '0') {
					strbuf_addch(&body, '\0');
					q++;
				} else if (*q != '\n') {
					strbuf_addch(&body, *q);
				}
			}
		} else {
			strbuf_add(&body, p, (size_t)(next - p));
		}
		rc = write_file(name.buf, body.buf, body.len, 0600);
		p = next;
	}
	strbuf_release(&name);
	strbuf_release(&body);
	return rc;
}

int
demo_setup(struct gs_config *cfg)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(demo_dir, sizeof(demo_dir), "%s/gpuscope-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(demo_dir)) {
		cmd_error(
		        "demo: cannot create a directory in '%s': %s (set TMPDIR to a writable directory)",
		        tmp && *tmp ? tmp : "/tmp", strerror(errno));
		demo_dir[0] = '\0';
		return -1;
	}
	atexit(demo_cleanup);
	if (write_file("lib/libnvidia-ml.so.1", demo_fake_lib,
	               (size_t)(demo_fake_lib_end - demo_fake_lib), 0700) < 0 ||
	    write_file("scenario.scn", demo_scenario, (size_t)(demo_scenario_end - demo_scenario),
	               0600) < 0 ||
	    unpack_bundle() < 0)
		return -1;
	strbuf_addf(&demo_paths[0], "%s/lib/libnvidia-ml.so.1", demo_dir);
	strbuf_addf(&demo_paths[1], "%s/proc", demo_dir);
	strbuf_addf(&demo_paths[2], "%s/passwd", demo_dir);
	strbuf_addf(&demo_paths[3], "%s/scenario.scn", demo_dir);
	cfg->nvml_path = demo_paths[0].buf;
	cfg->proc_root = demo_paths[1].buf;
	cfg->passwd_file = demo_paths[2].buf;
	cfg->sysfs_root = demo_dir; /* an empty /sys: nothing real is consulted */
	cfg->simulated = true;
	/* the scenario loops: scenario time is the wall clock modulo its period */
	if (setenv("FAKE_NVML_SCENARIO", demo_paths[3].buf, 1) < 0 ||
	    setenv("FAKE_NVML_EPOCH", "0", 0) < 0) {
		cmd_error("demo: cannot set the environment: %s", strerror(errno));
		return -1;
	}
	return 0;
}
