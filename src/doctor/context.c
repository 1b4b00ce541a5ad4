/*
 * What the checks read besides the sample model: paths under the
 * configured root, and the kernel log.
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/fileio.h"
#include "core/strbuf.h"

extern char **environ;

const char *
dr_path(const struct dr_ctx *ctx, char *buf, size_t size, const char *abs)
{
	const char *root = ctx->cfg && ctx->cfg->root ? ctx->cfg->root : "/";
	size_t len = strlen(root);

	while (len > 0 && root[len - 1] == '/')
		len--;
	snprintf(buf, size, "%.*s%s%s", (int)len, root, *abs == '/' ? "" : "/", abs);
	return buf;
}

/*
 * "6,1234,5678901,-;message" -> "message", with *us the record's time in
 * microseconds since boot (*has_t false when it has more digits than fit);
 * anything else as it is.
 */
static const char *
kmsg_body(const char *line, const char *end, unsigned long long *us, bool *has_t)
{
	const char *p = line;
	int commas = 0, digits = 0;

	*us = 0;
	*has_t = false;
	if (p == end || !isdigit((unsigned char)*p))
		return line;
	for (; p < end && *p != ';'; p++) {
		if (*p == ',') {
			commas++;
		} else if (isdigit((unsigned char)*p)) {
			if (commas == 2 && ++digits <= 18)
				*us = *us * 10 + (unsigned long long)(*p - '0');
		} else if (*p != '-' && *p != '+' && *p != 'c') {
			return line;
		}
	}
	if (p < end && commas >= 3) {
		*has_t = digits > 0 && digits <= 18;
		return p + 1;
	}
	return line;
}

/* Keep only the newest max bytes of out, from a line start. */
static void
trim_front(struct strbuf *out, size_t max)
{
	const char *cut;
	size_t drop;

	if (out->len <= max)
		return;
	cut = memchr(out->buf + out->len - max, '\n', max);
	drop = cut ? (size_t)(cut + 1 - out->buf) : out->len - max;
	memmove(out->buf, out->buf + drop, out->len - drop);
	strbuf_setlen(out, out->len - drop);
}

/*
 * Append the records of text (kmsg records or plain lines), without
 * continuation lines; a kmsg record's time becomes dmesg's "[sec.usec] ".
 */
static void
add_lines(struct strbuf *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *body;

		if (!eol)
			eol = end;
		if (*p != ' ' || eol == p) { /* " KEY=value" lines continue a kmsg record */
			unsigned long long us;
			bool has_t;

			body = kmsg_body(p, eol, &us, &has_t);
			if (eol > body) {
				if (has_t)
					strbuf_addf(out, "[%5llu.%06llu] ", us / 1000000,
					            us % 1000000);
				strbuf_add(out, body, (size_t)(eol - body));
				strbuf_addch(out, '\n');
			}
		}
		p = eol + 1;
	}
}

int
dr_klog_read(const struct gs_config *cfg, struct strbuf *out, size_t max, char *why,
             size_t why_size)
{
	struct dr_ctx ctx = { 0 };
	char path[4096], buf[8192];
	struct stat st;
	int fd;

	ctx.cfg = cfg;
	dr_path(&ctx, path, sizeof(path), "/dev/kmsg");
	fd = file_open(path);
	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			snprintf(
			        why, why_size,
			        "%s: permission denied (kernel.dmesg_restrict is on: run doctor as root "
			        "to read it)",
			        path);
		else
			snprintf(why, why_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		/* one record per read(); EAGAIN at the end, EPIPE when one was overwritten */
		for (;;) {
			ssize_t n = read(fd, buf, sizeof(buf));

			if (n > 0) {
				add_lines(out, buf, (size_t)n);
				if (out->len > 2 * max)
					trim_front(out, max);
			} else if (n < 0 && (errno == EPIPE || errno == EINTR)) {
				continue;
			} else {
				if (n < 0 && errno != EAGAIN) {
					snprintf(why, why_size, "%s: %s", path, strerror(errno));
					close(fd);
					return -1;
				}
				break;
			}
		}
	} else {
		struct strbuf raw = STRBUF_INIT;
		ssize_t n;

		if (S_ISREG(st.st_mode) && (size_t)st.st_size > max)
			lseek(fd, st.st_size - (off_t)max, SEEK_SET);
		while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				strbuf_add(&raw, buf, (size_t)n);
		add_lines(out, raw.buf, raw.len);
		strbuf_release(&raw);
	}
	close(fd);
	trim_front(out, max);
	return 0;
}

int
dr_klog_journal(const struct gs_config *cfg, struct strbuf *out, size_t max, char *why,
                size_t why_size)
{
	/* posix_spawn takes char *const argv[]: writable strings, not literals */
	static char a0[] = "journalctl", a1[] = "--dmesg", a2[] = "--boot",
	            a3[] = "--output=short-monotonic", a4[] = "--no-pager", a5[] = "--quiet";
	char *const argv[] = { a0, a1, a2, a3, a4, a5, NULL };
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = 0;
	double deadline;
	pid_t pid;
	char buf[65536];

	if (cfg->root && strcmp(cfg->root, "/") != 0) {
		snprintf(why, why_size, "journalctl is not run on a tree under --root");
		return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(why, why_size, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "journalctl", &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(pipefd[0]);
		close(pipefd[1]);
		snprintf(why, why_size, "journalctl is not installed");
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	deadline = clock_mono() + 5;
	for (;;) {
		struct pollfd p = { pipefd[0], POLLIN, 0 };
		double left = deadline - clock_mono();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(pipefd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		strbuf_add(out, buf, (size_t)n);
		if (out->len > 2 * max)
			trim_front(out, max);
	}
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	trim_front(out, max);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !out->len) {
		snprintf(why, why_size, "journalctl --dmesg gave %s",
		         out->len ? "an error" : "nothing (no permission to read the journal?)");
		strbuf_reset(out);
		return -1;
	}
	return 0;
}
