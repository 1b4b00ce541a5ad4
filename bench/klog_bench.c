/*
 * The kernel-log part of doctor on one file, timed (bench/klog.sh builds
 * it against libgpuscope.a): klog_next() alone, then dr_check_klog() (every
 * line through the NVIDIA, DRM and AER decoders, then their reports).
 * Prints MB/s of each and the findings' ids.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "doctor/doctor.h"
#include "doctor/klog.h"

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	struct dr_report r = DR_REPORT_INIT;
	struct dr_ctx ctx;
	struct klog_line l = { 0 };
	char buf[1 << 16];
	size_t pos = 0, lines = 0, bytes = 0;
	double t0, t1, t2, mb;
	ssize_t n;
	int fd;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0) {
		fprintf(stderr, "usage: klog_bench FILE\n");
		return 2;
	}
	t0 = now();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	t1 = now();
	mb = (double)sb.len / 1e6;
	while (klog_next(sb.buf, sb.len, &pos, &l, 0)) {
		lines++;
		bytes += l.len;
	}
	t2 = now();
	printf("read     %8.1f MB in %.3f s\n", mb, t1 - t0);
	printf("split    %8zu lines in %.3f s: %.0f MB/s\n", lines, t2 - t1, mb / (t2 - t1));
	memset(&ctx, 0, sizeof(ctx));
	ctx.klog = sb.buf;
	ctx.klog_source = argv[1];
	t1 = now();
	dr_check_klog(&ctx, &r);
	t2 = now();
	printf("decode   %8zu findings in %.3f s: %.0f MB/s (split + decode + report)\n", r.nr,
	       t2 - t1, mb / (t2 - t1));
	for (size_t i = 0; i < r.nr; i++)
		printf("  %-8s %-26s %s\n", dr_severity_key(r.f[i].severity), r.f[i].id,
		       r.f[i].title);
	dr_report_release(&r);
	strbuf_release(&sb);
	return bytes ? 0 : 1;
}
