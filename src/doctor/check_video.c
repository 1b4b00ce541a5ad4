/*
 * setup.video.*: why "GPU acceleration does nothing" in a transcoder. The
 * video engines each GPU has (NVENC/NVDEC, VCN, Quick Sync), whether the
 * ffmpeg on PATH was built to use them (the encoder and hwaccel names in its
 * libavcodec, found through its ELF dynamic section), and the run-time
 * libraries those paths load (libnvidia-encode, libnvcuvid, VA drivers).
 * Nothing is run: files are read, the big ones through mmap. The catalog of
 * these ids is in check_render.c.
 */
#include "doctor/doctor.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/pci.h"
#include "core/config.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* --- files under the root ---------------------------------------------------------------- */

/*
 * abs (a path on the machine) followed through symbolic links, each read
 * under ctx's root (an absolute target is taken under the root too): the
 * final path on the machine in out_abs, the path to open here in out.
 * Returns the file's stat, or -1 when it is missing.
 */
static int
resolve(const struct dr_ctx *ctx, const char *abs, char *out_abs, size_t abs_size, char *out,
        size_t size, struct stat *st)
{
	char cur[4096], link[4096], next[8192];

	snprintf(cur, sizeof(cur), "%s", abs);
	for (int hops = 0; hops < 16; hops++) {
		const char *slash;
		ssize_t n;

		dr_path(ctx, out, size, cur);
		if (lstat(out, st) < 0)
			return -1;
		if (!S_ISLNK(st->st_mode)) {
			snprintf(out_abs, abs_size, "%s", cur);
			return 0;
		}
		n = readlink(out, link, sizeof(link) - 1);
		if (n <= 0)
			return -1;
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			snprintf(next, sizeof(next), "%s", link);
		else
			snprintf(next, sizeof(next), "%.*s/%s", (int)(slash - cur), cur, link);
		if (strlen(next) >= sizeof(cur))
			return -1;
		memcpy(cur, next, strlen(next) + 1);
	}
	return -1;
}

struct map {
	const unsigned char *p;
	size_t len;
};

/* The whole regular file path mapped read-only; false when it cannot be. */
static bool
map_file(const char *path, struct map *m)
{
	struct stat st;
	void *p;
	/* never blocks: a FIFO put there since it was looked at is refused below */
	int fd = file_open(path);

	m->p = NULL;
	m->len = 0;
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > ((uint64_t)1 << 31)) {
		close(fd);
		return false;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return false;
	m->p = p;
	m->len = (size_t)st.st_size;
	return true;
}

static void
unmap_file(struct map *m)
{
	if (m->p)
		munmap((void *)(uintptr_t)m->p, m->len);
	m->p = NULL;
}

/* --- ELF: DT_NEEDED and the search path of a program ---------------------------------- */

struct elf_info {
	bool elf;
	unsigned machine;
	char avcodec[64]; /* the DT_NEEDED "libavcodec.so.N", or "" */
	char *rpath;      /* DT_RPATH, owned (whole: a cut list names other directories) */
	char *runpath;    /* DT_RUNPATH, owned */
};

static void
elf_info_release(struct elf_info *e)
{
	free(e->rpath);
	free(e->runpath);
	e->rpath = e->runpath = NULL;
}

static bool
rd(const struct map *m, uint64_t off, void *dst, size_t n)
{
	if (off > m->len || n > m->len - off)
		return false;
	memcpy(dst, m->p + off, n);
	return true;
}

struct seg {
	uint64_t off, vaddr, filesz;
};

/* The string at virtual address strtab + off, or NULL. */
static const char *
elf_str(const struct map *m, const struct seg *load, size_t nr_load, uint64_t strtab,
        uint64_t strsz, uint64_t off)
{
	if (off >= strsz)
		return NULL;
	for (size_t i = 0; i < nr_load; i++) {
		uint64_t v = strtab + off, fo;

		if (v < load[i].vaddr || v - load[i].vaddr >= load[i].filesz)
			continue;
		fo = load[i].off + (v - load[i].vaddr);
		if (fo >= m->len || !memchr(m->p + fo, '\0', m->len - fo))
			return NULL;
		return (const char *)m->p + fo;
	}
	return NULL;
}

/* Read what e holds from the ELF file in m (either class, this machine's byte order). */
static void
elf_read(const struct map *m, struct elf_info *e)
{
	unsigned char ident[EI_NIDENT];
	struct seg load[16], dyn = { 0, 0, 0 };
	uint64_t phoff, strtab = 0, strsz = 0, needed[128], rpath = UINT64_MAX,
	                runpath = UINT64_MAX;
	size_t nr_load = 0, nr_needed = 0, phentsize, dynsize;
	unsigned phnum;
	bool is64;

	memset(e, 0, sizeof(*e));
	if (!rd(m, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG))
		return;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (ident[EI_DATA] != ELFDATA2LSB)
		return;
#else
	if (ident[EI_DATA] != ELFDATA2MSB)
		return;
#endif
	if (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32)
		return;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr h;

		if (!rd(m, 0, &h, sizeof(h)))
			return;
		phoff = h.e_phoff;
		phnum = h.e_phnum;
		phentsize = h.e_phentsize;
		e->machine = h.e_machine;
	} else {
		Elf32_Ehdr h;

		if (!rd(m, 0, &h, sizeof(h)))
			return;
		phoff = h.e_phoff;
		phnum = h.e_phnum;
		phentsize = h.e_phentsize;
		e->machine = h.e_machine;
	}
	e->elf = true;
	if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return;
	for (unsigned i = 0; i < phnum; i++) {
		uint64_t off = phoff + (uint64_t)i * phentsize;
		struct seg s;
		uint32_t type;

		if (is64) {
			Elf64_Phdr ph;

			if (!rd(m, off, &ph, sizeof(ph)))
				return;
			type = ph.p_type;
			s = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
		} else {
			Elf32_Phdr ph;

			if (!rd(m, off, &ph, sizeof(ph)))
				return;
			type = ph.p_type;
			s = (struct seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
		}
		if (type == PT_LOAD && nr_load < 16)
			load[nr_load++] = s;
		else if (type == PT_DYNAMIC)
			dyn = s;
	}
	dynsize = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	/* a corrupt size walks no further than the file (nor wraps around) */
	if (dyn.off > m->len)
		dyn.filesz = 0;
	else if (dyn.filesz > m->len - dyn.off)
		dyn.filesz = m->len - dyn.off;
	for (uint64_t off = dyn.off; dyn.filesz && off + dynsize <= dyn.off + dyn.filesz;
	     off += dynsize) {
		int64_t tag;
		uint64_t val;

		if (is64) {
			Elf64_Dyn d;

			if (!rd(m, off, &d, sizeof(d)))
				break;
			tag = d.d_tag;
			val = d.d_un.d_val;
		} else {
			Elf32_Dyn d;

			if (!rd(m, off, &d, sizeof(d)))
				break;
			tag = d.d_tag;
			val = d.d_un.d_val;
		}
		if (tag == DT_NULL)
			break;
		if (tag == DT_STRTAB)
			strtab = val;
		else if (tag == DT_STRSZ)
			strsz = val;
		else if (tag == DT_NEEDED && nr_needed < 128)
			needed[nr_needed++] = val;
		else if (tag == DT_RPATH)
			rpath = val;
		else if (tag == DT_RUNPATH)
			runpath = val;
	}
	for (size_t i = 0; i < nr_needed; i++) {
		const char *s = elf_str(m, load, nr_load, strtab, strsz, needed[i]);

		if (s && !strncmp(s, "libavcodec.so", 13) && strlen(s) < sizeof(e->avcodec)) {
			snprintf(e->avcodec, sizeof(e->avcodec), "%s", s);
			break;
		}
	}
	if (rpath != UINT64_MAX) {
		const char *s = elf_str(m, load, nr_load, strtab, strsz, rpath);

		e->rpath = xstrdup(s ? s : "");
	}
	if (runpath != UINT64_MAX) {
		const char *s = elf_str(m, load, nr_load, strtab, strsz, runpath);

		e->runpath = xstrdup(s ? s : "");
	}
}

/* --- library directories ------------------------------------------------------------------ */

struct dirs {
	char **v;
	size_t nr, alloc;
};

static void
dirs_add(struct dirs *d, const char *dir, size_t len)
{
	char *s;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!len || dir[0] != '/')
		return;
	for (size_t i = 0; i < d->nr; i++)
		if (strlen(d->v[i]) == len && !strncmp(d->v[i], dir, len))
			return;
	s = xstrndup(dir, len);
	ALLOC_GROW(d->v, d->nr + 1, d->alloc);
	d->v[d->nr++] = s;
}

/* An absolute path with its "." and ".." components taken out, in place. */
static void
path_clean(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		char *end;
		size_t len;

		while (*in == '/')
			in++;
		end = strchr(in, '/');
		len = end ? (size_t)(end - in) : strlen(in);
		if (len == 1 && in[0] == '.') {
			/* nothing */
		} else if (len == 2 && in[0] == '.' && in[1] == '.') {
			while (out > p && *--out != '/')
				;
		} else if (len) {
			*out++ = '/';
			memmove(out, in, len);
			out += len;
		}
		in += len;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/* A colon-separated list; $ORIGIN (or ${ORIGIN}) stands for origin. */
static void
dirs_add_list(struct dirs *d, const char *list, const char *origin)
{
	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		char buf[4096];

		size_t skip = !strncmp(list, "${ORIGIN}", 9) ? 9
		              : !strncmp(list, "$ORIGIN", 7) ? 7
		                                             : 0;

		/* "$ORIGINAL/lib" is no $ORIGIN: the name ends at '/' or the entry's end */
		if (skip && skip < len && list[skip] != '/')
			skip = 0;
		if (origin && skip) {

			snprintf(buf, sizeof(buf), "%s%.*s", origin, (int)(len - skip),
			         list + skip);
			path_clean(buf);
			dirs_add(d, buf, strlen(buf));
		} else {
			dirs_add(d, list, len);
		}
		list = end ? end + 1 : NULL;
	}
}

static void
dirs_release(struct dirs *d)
{
	for (size_t i = 0; i < d->nr; i++)
		free(d->v[i]);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

#define LDCONF_CAP (16 * 1024)
/* a bound on the cost of a huge configuration: each directory is looked into per library */
#define LDCONF_MAX_DIRS 1024

/*
 * The lines that name directories in one ld.so.conf file (include lines
 * are not followed: ld.so.conf.d is read apart). Leading blanks and "#"
 * comments are ld.so.conf's; a file longer than what is read loses its
 * cut last line, not a directory shortened into another.
 */
static void
dirs_add_conf(const struct dr_ctx *ctx, struct dirs *d, const char *abs)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096];

	if (file_read_regular(dr_path(ctx, path, sizeof(path), abs), &sb, LDCONF_CAP) == 0) {
		if (sb.len == LDCONF_CAP) {
			char *nl = memrchr(sb.buf, '\n', sb.len);

			strbuf_setlen(&sb, nl ? (size_t)(nl - sb.buf) : 0);
		}
		for (char *line = sb.buf; line && *line;) {
			char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			const char *hash = memchr(line, '#', len);

			if (hash)
				len = (size_t)(hash - line);
			while (len && (*line == ' ' || *line == '\t')) {
				line++;
				len--;
			}
			while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
			               line[len - 1] == '\r'))
				len--;
			if (len && line[0] == '/' && d->nr < LDCONF_MAX_DIRS)
				dirs_add(d, line, len);
			line = nl ? nl + 1 : NULL;
		}
	}
	strbuf_release(&sb);
}

static const char *
multiarch(unsigned machine)
{
	switch (machine) {
	case EM_X86_64:
		return "x86_64-linux-gnu";
	case EM_AARCH64:
		return "aarch64-linux-gnu";
	case EM_PPC64:
		return "powerpc64le-linux-gnu";
	case EM_386:
		return "i386-linux-gnu";
	default:
		return NULL;
	}
}

static unsigned
host_machine(void)
{
#if defined(__x86_64__)
	return EM_X86_64;
#elif defined(__aarch64__)
	return EM_AARCH64;
#elif defined(__powerpc64__)
	return EM_PPC64;
#else
	return 0;
#endif
}

/* /etc/ld.so.conf and /etc/ld.so.conf.d/\*.conf, then the default directories. */
static void
dirs_add_system(const struct dr_ctx *ctx, struct dirs *d, unsigned machine)
{
	const char *triple = multiarch(machine);
	static const char *const plain[] = { "/lib64", "/usr/lib64", "/lib", "/usr/lib",
		                             "/usr/local/lib" };
	char path[4096];
	DIR *dir;

	dirs_add_conf(ctx, d, "/etc/ld.so.conf");
	dir = opendir(dr_path(ctx, path, sizeof(path), "/etc/ld.so.conf.d"));
	if (dir) {
		struct dirent *de;

		while ((de = readdir(dir))) {
			size_t n = strlen(de->d_name);
			char abs[512];

			if (n < 6 || strcmp(de->d_name + n - 5, ".conf"))
				continue;
			snprintf(abs, sizeof(abs), "/etc/ld.so.conf.d/%s", de->d_name);
			dirs_add_conf(ctx, d, abs);
		}
		closedir(dir);
	}
	if (triple) {
		char buf[128];

		snprintf(buf, sizeof(buf), "/lib/%s", triple);
		dirs_add(d, buf, strlen(buf));
		snprintf(buf, sizeof(buf), "/usr/lib/%s", triple);
		dirs_add(d, buf, strlen(buf));
	}
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		dirs_add(d, plain[i], strlen(plain[i]));
}

/* The first dir/name that exists (as a file, after links); its machine path in abs. */
static bool
find_in(const struct dr_ctx *ctx, const struct dirs *d, const char *name, char *abs,
        size_t abs_size, char *path, size_t size)
{
	for (size_t i = 0; i < d->nr; i++) {
		char cand[4096];
		struct stat st;

		snprintf(cand, sizeof(cand), "%s/%s", d->v[i], name);
		if (resolve(ctx, cand, abs, abs_size, path, size, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

static void
dirs_join(const struct dirs *d, struct strbuf *sb)
{
	for (size_t i = 0; i < d->nr; i++)
		strbuf_addf(sb, "%s%s", i ? ":" : "", d->v[i]);
}

/* --- what ffmpeg was built with ----------------------------------------------------------- */

enum api { API_NVENC, API_NVDEC, API_VAAPI, API_QSV, API_AMF, API_VULKAN, API__N };

static const char *const api_label[API__N] = { "NVENC", "NVDEC", "VA-API",
	                                       "QSV",   "AMF",   "Vulkan video" };
/* name suffixes: encoders "h264_nvenc", decoders "h264_cuvid", hwaccels "h264_nvdec" */
static const char *const api_suffix[API__N][2] = {
	{ "nvenc", NULL }, { "nvdec", "cuvid" }, { "vaapi", NULL },
	{ "qsv", NULL },   { "amf", NULL },      { "vulkan", NULL },
};
static const char *const codecs[] = { "h264", "hevc", "av1" };
#define NR_CODECS (sizeof(codecs) / sizeof(codecs[0]))

struct ffmpeg {
	bool on_path;
	char abs[4096]; /* ffmpeg on the machine */
	char lib[4096]; /* where the names were looked for: libavcodec, or ffmpeg itself */
	char avcodec[64];
	bool lib_missing;      /* a dynamic ffmpeg whose libavcodec was not found */
	char searched[1024];   /* where it was looked for, then */
	const char *unchecked; /* why ffmpeg itself could not be looked into, or NULL */
	/* found[api]: bit (codec * 2 + suffix) */
	unsigned found[API__N];
	unsigned machine;
};

static bool
ident_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/*
 * Every "<codec>_<suffix>" of the tables in m, as a whole word (strings in
 * a library are NUL-separated; a test's text file has newlines): one
 * memmem pass per codec prefix.
 */
static void
scan_names(const struct map *m, unsigned found[API__N])
{
	for (size_t c = 0; c < NR_CODECS; c++) {
		char pre[8];
		size_t plen = (size_t)snprintf(pre, sizeof(pre), "%s_", codecs[c]);
		const unsigned char *p = m->p, *end = m->p + m->len;

		while ((p = memmem(p, (size_t)(end - p), pre, plen)) != NULL) {
			const unsigned char *s = p + plen;

			if (p > m->p && ident_char(p[-1])) {
				p = s;
				continue;
			}
			for (size_t a = 0; a < API__N; a++)
				for (size_t k = 0; k < 2 && api_suffix[a][k]; k++) {
					size_t sl = strlen(api_suffix[a][k]);

					if ((size_t)(end - s) >= sl &&
					    !memcmp(s, api_suffix[a][k], sl) &&
					    (s + sl == end || !ident_char(s[sl])))
						found[a] |= 1u << (c * 2 + k);
				}
			p = s;
		}
	}
}

/* "h264_nvenc, hevc_nvenc" for what was found of api */
static void
found_names(const struct ffmpeg *ff, enum api a, struct strbuf *sb)
{
	size_t n = 0;

	for (size_t c = 0; c < NR_CODECS; c++)
		for (size_t k = 0; k < 2; k++)
			if (ff->found[a] & (1u << (c * 2 + k)))
				strbuf_addf(sb, "%s%s_%s", n++ ? ", " : "", codecs[c],
				            api_suffix[a][k]);
}

/* The first executable "ffmpeg" in PATH's absolute directories, under the root. */
static bool
find_ffmpeg(const struct dr_ctx *ctx, struct ffmpeg *ff, char *path, size_t size)
{
	const char *list = ctx->getenv("PATH");

	if (!list || !*list)
		list = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (list && *list) {
		const char *end = strchr(list, ':');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		char cand[4096];
		struct stat st;

		if (len && list[0] == '/') {
			snprintf(cand, sizeof(cand), "%.*s/ffmpeg", (int)len, list);
			if (resolve(ctx, cand, ff->abs, sizeof(ff->abs), path, size, &st) == 0 &&
			    S_ISREG(st.st_mode) && (st.st_mode & 0111))
				return true;
		}
		list = end ? end + 1 : NULL;
	}
	return false;
}

static void
ffmpeg_read(const struct dr_ctx *ctx, struct ffmpeg *ff)
{
	char path[4096], libpath[4096];
	struct elf_info e;
	struct map m, lm;

	memset(ff, 0, sizeof(*ff));
	ff->machine = host_machine();
	if (!find_ffmpeg(ctx, ff, path, sizeof(path)))
		return;
	ff->on_path = true;
	if (!map_file(path, &m)) {
		struct stat st;

		/* what it has cannot be told: not "built without" */
		ff->unchecked = !stat(path, &st) && st.st_size == 0 ? "is an empty file"
		                                                    : "could not be read";
		return;
	}
	if (m.len >= 2 && m.p[0] == '#' && m.p[1] == '!') {
		/* a wrapper script: the ffmpeg it runs is elsewhere */
		ff->unchecked = "is a script (#!), not the program";
		unmap_file(&m);
		return;
	}
	elf_read(&m, &e);
	if (e.elf && e.machine)
		ff->machine = e.machine;
	if (!e.avcodec[0]) {
		/* static, or not ELF at all: the names are in the program itself */
		snprintf(ff->lib, sizeof(ff->lib), "%s", ff->abs);
		scan_names(&m, ff->found);
		unmap_file(&m);
		elf_info_release(&e);
		return;
	}
	unmap_file(&m);
	snprintf(ff->avcodec, sizeof(ff->avcodec), "%s", e.avcodec);
	{
		struct dirs d = { NULL, 0, 0 };
		char origin[4096];
		const char *slash = strrchr(ff->abs, '/');

		snprintf(origin, sizeof(origin), "%.*s", slash ? (int)(slash - ff->abs) : 0,
		         ff->abs);
		/* DT_RPATH counts only without DT_RUNPATH (even an empty one) */
		if (!e.runpath)
			dirs_add_list(&d, e.rpath, origin);
		dirs_add_list(&d, ctx->getenv("LD_LIBRARY_PATH"), NULL);
		dirs_add_list(&d, e.runpath, origin);
		dirs_add_system(ctx, &d, ff->machine);
		if (!find_in(ctx, &d, e.avcodec, ff->lib, sizeof(ff->lib), libpath,
		             sizeof(libpath)) ||
		    !map_file(libpath, &lm)) {
			struct strbuf sb = STRBUF_INIT;

			ff->lib_missing = true;
			dirs_join(&d, &sb);
			snprintf(ff->searched, sizeof(ff->searched), "%s", sb.buf);
			strbuf_release(&sb);
			dirs_release(&d);
			elf_info_release(&e);
			return;
		}
		dirs_release(&d);
		elf_info_release(&e);
	}
	scan_names(&lm, ff->found);
	unmap_file(&lm);
}

/* --- the GPUs' video engines --------------------------------------------------------------- */

/* NVIDIA's data-centre GPUs: NVDEC, but no NVENC. */
static bool
datacentre_no_nvenc(const char *name)
{
	static const char *const models[] = { "A100", "A30",   "A800",  "H100", "H200",
		                              "H800", "H20",   "GH200", "B100", "B200",
		                              "B300", "GB200", "GB300" };

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		size_t n = strlen(models[i]);

		for (const char *p = strstr(name, models[i]); p; p = strstr(p + 1, models[i]))
			if ((p == name || !ident_char((unsigned char)p[-1]) || p[-1] == '_') &&
			    !ident_char((unsigned char)p[n]))
				return true;
	}
	return false;
}

struct engines {
	bool enc, dec;
	char how[512]; /* where it was read */
};

static bool
fw_nonzero(const struct dr_ctx *ctx, const char *card, const char *name, struct engines *e)
{
	char rel[256];
	uint64_t v;

	snprintf(rel, sizeof(rel), "class/drm/%s/device/fw_version/%s", card, name);
	if (file_read_u64(ctx->cfg->sysfs_root, rel, &v, NULL) < 0 || !v)
		return false;
	snprintf(e->how, sizeof(e->how), "%s/%s = 0x%08llx", ctx->cfg->sysfs_root, rel,
	         (unsigned long long)v);
	return true;
}

static void
engines_of(const struct dr_ctx *ctx, const struct gpu_device *d, struct engines *e)
{
	struct strbuf names = STRBUF_INIT;

	memset(e, 0, sizeof(*e));
	if (d->vendor == VENDOR_NVIDIA) {
		e->enc = dev_has(d, GF_UTIL_ENC);
		e->dec = dev_has(d, GF_UTIL_DEC);
		snprintf(e->how, sizeof(e->how),
		         "NVML: encoder utilisation %s, decoder utilisation %s",
		         e->enc ? "readable" : "not supported",
		         e->dec ? "readable" : "not supported");
		return;
	}
	for (unsigned i = 0; i < d->nr_engine && i < GPU_MAX_ENGINES; i++) {
		const char *n = d->engine[i].name;

		strbuf_addf(&names, "%s%s", i ? ", " : "", n);
		if (!strncmp(n, "enc", 3) || !strncmp(n, "vcn", 3) || !strcmp(n, "video") ||
		    !strcmp(n, "vcs"))
			e->enc = true;
		if (!strcmp(n, "dec") || !strncmp(n, "vcn", 3) || !strcmp(n, "video") ||
		    !strcmp(n, "vcs"))
			e->dec = true;
	}
	if (e->enc || e->dec) {
		snprintf(e->how, sizeof(e->how), "DRM fdinfo engines of %s: %s",
		         d->card[0] ? d->card : "the GPU", names.buf);
		goto out;
	}
	if (d->vendor == VENDOR_AMD && dev_has(d, GF_UTIL_DEC)) {
		e->enc = e->dec = true;
		snprintf(e->how, sizeof(e->how), "%s/class/drm/%s/device/vcn_busy_percent readable",
		         ctx->cfg->sysfs_root, d->card);
		goto out;
	}
	if (!d->card[0])
		goto out;
	if (d->vendor == VENDOR_AMD) {
		if (fw_nonzero(ctx, d->card, "vcn_fw_version", e))
			e->enc = e->dec = true;
		else if (fw_nonzero(ctx, d->card, "uvd_fw_version", e))
			e->dec = true;
		if (!e->enc && fw_nonzero(ctx, d->card, "vce_fw_version", e))
			e->enc = true;
	} else if (d->vendor == VENDOR_INTEL) {
		char rel[256];

		snprintf(rel, sizeof(rel), "class/drm/%s/engine/vcs0", d->card);
		if (!file_exists(ctx->cfg->sysfs_root, rel))
			for (int gt = 0; gt < 4; gt++) {
				snprintf(rel, sizeof(rel),
				         "class/drm/%s/device/tile0/gt%d/engines/vcs", d->card, gt);
				if (file_exists(ctx->cfg->sysfs_root, rel))
					break;
				rel[0] = '\0';
			}
		if (rel[0]) {
			e->enc = e->dec = true;
			snprintf(e->how, sizeof(e->how), "%s/%s", ctx->cfg->sysfs_root, rel);
		}
	}
out:
	strbuf_release(&names);
}

static const char *
engine_words(enum gpu_vendor v)
{
	switch (v) {
	case VENDOR_NVIDIA:
		return "NVENC encoder|NVDEC decoder";
	case VENDOR_AMD:
		return "VCN/VCE encoder|VCN/UVD decoder";
	case VENDOR_INTEL:
		return "Quick Sync encoder|Quick Sync decoder";
	default:
		return "encoder|decoder";
	}
}

/* What the GPUs of one vendor have, summed over them. */
struct vendor_sum {
	size_t nr;
	bool enc, dec, known;
	bool no_nvenc; /* every NVIDIA GPU is a data-centre one without NVENC */
	bool nvidia_driver;
	char render[32]; /* "renderD128": its render node, when known */
};

/*
 * GPUs of one model with the same engines make one finding ("GPUs 0-7
 * (NVIDIA H100 80GB HBM3): ..."), not one each.
 */
enum eng_kind { EK_ENGINES, EK_NO_NVENC, EK_NONE };

struct eng_group {
	enum eng_kind kind;
	enum gpu_vendor vendor;
	char name[96];
	bool enc, dec;
	struct strbuf gpus;     /* "0, 1, 2" */
	struct strbuf evidence; /* lines, '\n'-separated, each once */
	unsigned n;
};

static void
group_add(struct eng_group *g, size_t *nr, size_t max, enum eng_kind kind,
          const struct gpu_device *d, size_t index, const struct engines *e)
{
	struct eng_group *x = NULL;

	for (size_t i = 0; i < *nr; i++)
		if (g[i].kind == kind && g[i].vendor == d->vendor && g[i].enc == e->enc &&
		    g[i].dec == e->dec && !strcmp(g[i].name, d->name))
			x = &g[i];
	if (!x) {
		if (*nr == max)
			return;
		x = &g[(*nr)++];
		memset(x, 0, sizeof(*x));
		x->kind = kind;
		x->vendor = d->vendor;
		snprintf(x->name, sizeof(x->name), "%s", d->name);
		x->enc = e->enc;
		x->dec = e->dec;
		strbuf_init(&x->gpus, 32);
		strbuf_init(&x->evidence, 128);
	}
	strbuf_addf(&x->gpus, "%s%zu", x->n++ ? ", " : "", index);
	if (!strstr(x->evidence.buf, e->how))
		strbuf_addf(&x->evidence, "%s\n", e->how);
}

static void
group_emit(struct dr_report *r, struct eng_group *g)
{
	const char *w = engine_words(g->vendor), *bar = strchr(w, '|');
	const char *name = g->name[0] ? g->name : vendor_key(g->vendor);
	char gpus[160];
	struct dr_finding *f;

	snprintf(gpus, sizeof(gpus), "GPU%s %s (%s)", g->n == 1 ? "" : "s", g->gpus.buf, name);
	switch (g->kind) {
	case EK_NO_NVENC:
		f = dr_add(r, "setup.video.no_nvenc", DR_INFO, "%s %s %sno NVENC encoder", gpus,
		           g->n == 1 ? "has" : "have", g->dec ? "NVDEC decoders but " : "");
		dr_evidence(f, "NVML: name '%s': a data-centre model without NVENC", g->name);
		if (g->dec)
			dr_evidence(f, "NVML: decoder utilisation readable");
		break;
	case EK_NONE:
		f = dr_add(r, "setup.video.no_engines", DR_INFO,
		           "%s: no video encoder or decoder reported", gpus);
		break;
	default:
		f = dr_add(r, "setup.video.engines", DR_OK, "%s: %.*s%s%s", gpus,
		           g->enc ? (int)(bar - w) : 0, w, g->enc && g->dec ? ", " : "",
		           g->dec ? bar + 1 : "");
		break;
	}
	for (const char *p = g->kind == EK_NO_NVENC ? "" : g->evidence.buf; *p;) {
		const char *eol = strchr(p, '\n');

		dr_evidence(f, "%.*s", (int)(eol - p), p);
		p = eol + 1;
	}
	if (g->kind == EK_NO_NVENC) {
		dr_meaning(f,
		           "NVIDIA's data-centre GPUs (A100, A30, H100, H200, B200 and their "
		           "kin) have video decoders (NVDEC, NVJPG) but no video encoder: "
		           "h264_nvenc and hevc_nvenc fail on them ('No capable devices found' / "
		           "'OpenEncodeSessionEx failed'). NVML still reads an encoder "
		           "utilisation of 0 %% on them.");
		dr_action(f, "Decode on the GPU and encode on the CPU ('ffmpeg -hwaccel cuda -i "
		             "in.mp4 -c:v libx264 out.mp4'), or encode on a GPU with NVENC (L4, "
		             "L40S, A10, RTX).");
	} else if (g->kind == EK_NONE) {
		dr_meaning(f, "NVML reads no encoder or decoder use on this GPU: it has none (some "
		              "compute-only and mining boards), or the driver hides them (a vGPU "
		              "profile without video, MIG).");
	}
	strbuf_release(&g->gpus);
	strbuf_release(&g->evidence);
}

static void
check_engines(const struct dr_ctx *ctx, struct dr_report *r, struct vendor_sum sum[3])
{
	const struct gpu_snapshot *s = ctx->snap;
	struct eng_group groups[16];
	size_t nr_groups = 0;

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		struct vendor_sum *vs;
		struct engines e;

		if (d->vendor == VENDOR_NVIDIA)
			vs = &sum[0];
		else if (d->vendor == VENDOR_AMD)
			vs = &sum[1];
		else if (d->vendor == VENDOR_INTEL)
			vs = &sum[2];
		else
			continue;
		if (!vs->nr)
			vs->no_nvenc = true;
		vs->nr++;
		if (d->vendor == VENDOR_NVIDIA)
			vs->nvidia_driver = true;
		engines_of(ctx, d, &e);
		/*
		 * By the model: NVML reads encoder utilisation (0 %) on these GPUs
		 * too (nvidia-smi -q on an H100 shows "Encoder : 0 %"), so a
		 * readable counter does not mean an NVENC engine.
		 */
		if (d->vendor == VENDOR_NVIDIA && datacentre_no_nvenc(d->name)) {
			vs->known = true;
			vs->dec |= e.dec;
			e.enc = false;
			group_add(groups, &nr_groups, 16, EK_NO_NVENC, d, i, &e);
			continue;
		}
		vs->no_nvenc = false;
		if (!e.enc && !e.dec) {
			if (d->vendor == VENDOR_NVIDIA && d->state == DEV_OK) {
				vs->known = true;
				group_add(groups, &nr_groups, 16, EK_NONE, d, i, &e);
			}
			continue;
		}
		vs->known = true;
		vs->enc |= e.enc;
		vs->dec |= e.dec;
		group_add(groups, &nr_groups, 16, EK_ENGINES, d, i, &e);
	}
	for (size_t i = 0; i < nr_groups; i++)
		group_emit(r, &groups[i]);
}

/* --- findings about ffmpeg ---------------------------------------------------------------- */

static void
ffmpeg_evidence(struct dr_finding *f, const struct ffmpeg *ff)
{
	struct strbuf has = STRBUF_INIT, lacks = STRBUF_INIT;

	if (ff->avcodec[0])
		dr_evidence(f, "%s: dynamically linked, DT_NEEDED %s", ff->abs, ff->avcodec);
	else
		dr_evidence(f, "%s: no libavcodec among its DT_NEEDED (static): searched itself",
		            ff->abs);
	for (size_t a = 0; a < API__N; a++) {
		if (ff->found[a]) {
			strbuf_addstr(&has, has.len ? "; " : "");
			found_names(ff, a, &has);
		} else {
			strbuf_addf(&lacks, "%s%s", lacks.len ? ", " : "", api_label[a]);
		}
	}
	if (has.len)
		dr_evidence(f, "%s: has %s", ff->lib, has.buf);
	if (lacks.len)
		dr_evidence(f, "%s: no encoder or hwaccel names of %s", ff->lib, lacks.buf);
	strbuf_release(&has);
	strbuf_release(&lacks);
}

static const char watch_hint[] =
        "See the engines at work during a transcode in 'gpuscope top' (ENC/DEC columns) or "
        "'gpuscope watch --fields utilization.encoder,utilization.decoder'.";

static void
ffmpeg_nvidia(struct dr_report *r, const struct ffmpeg *ff, const struct vendor_sum *vs)
{
	bool want_enc = !vs->no_nvenc;
	bool enc = ff->found[API_NVENC] != 0, dec = ff->found[API_NVDEC] != 0;
	struct dr_finding *f;

	if (dec && (enc || !want_enc)) {
		f = dr_add(r, "setup.video.ffmpeg_gpu", DR_OK,
		           "ffmpeg (%s) can use the NVIDIA GPU: %s", ff->abs,
		           want_enc ? "NVENC and NVDEC" : "NVDEC (the GPU has no NVENC)");
		ffmpeg_evidence(f, ff);
		if (want_enc)
			dr_action(
			        f,
			        "Transcode on the GPU: 'ffmpeg -hwaccel cuda -hwaccel_output_format "
			        "cuda -i in.mp4 -c:v h264_nvenc -preset p4 out.mp4' (hevc_nvenc, "
			        "av1_nvenc where the GPU has them). %s",
			        watch_hint);
		else
			dr_action(f,
			          "Decode on the GPU: 'ffmpeg -hwaccel cuda -i in.mp4 -c:v libx264 "
			          "out.mp4'. %s",
			          watch_hint);
		return;
	}
	f = dr_add(r, "setup.video.ffmpeg_no_gpu", DR_WARNING,
	           "ffmpeg (%s) was built without %s: it cannot use the NVIDIA GPU's video engines",
	           ff->abs,
	           !dec && !enc && want_enc ? "NVENC and NVDEC"
	           : !dec                   ? "NVDEC/CUVID"
	                                    : "NVENC");
	ffmpeg_evidence(f, ff);
	dr_meaning(f, "Asked for -c:v h264_nvenc it says 'Unknown encoder', and -hwaccel cuda "
	              "decodes on the CPU: the GPU's encoder and decoder stay idle.");
	dr_action(f,
	          "Use an ffmpeg built with NVENC and NVDEC: the distribution's (Debian, Ubuntu: "
	          "'sudo apt install ffmpeg'; it loads the driver's libnvidia-encode at run time; "
	          "Fedora: ffmpeg from RPM Fusion), BtbN's FFmpeg-Builds (linux64-gpl), or "
	          "jellyfin-ffmpeg. The static builds from johnvansickle.com have no NVENC. Check "
	          "with 'ffmpeg -hide_banner -encoders | grep nvenc'. %s",
	          watch_hint);
}

static void
ffmpeg_vaapi(struct dr_report *r, const struct ffmpeg *ff, const struct vendor_sum *vs, bool intel)
{
	const char *who = intel ? "Intel" : "AMD";
	const char *node = vs->render[0] ? vs->render : "renderD128";
	bool va = ff->found[API_VAAPI] != 0, qsv = intel && ff->found[API_QSV];
	struct dr_finding *f;

	if (va || qsv) {
		f = dr_add(r, "setup.video.ffmpeg_gpu", DR_OK,
		           "ffmpeg (%s) can use the %s GPU: %s%s%s", ff->abs, who,
		           va ? "VA-API" : "", va && qsv ? " and " : "",
		           qsv ? "Quick Sync (QSV)" : "");
		ffmpeg_evidence(f, ff);
		if (qsv)
			dr_action(
			        f,
			        "Transcode on the GPU: 'ffmpeg -hwaccel qsv -hwaccel_output_format qsv "
			        "-i in.mp4 -c:v h264_qsv out.mp4', or through VA-API: 'ffmpeg "
			        "-vaapi_device /dev/dri/%s -i in.mp4 -vf format=nv12,hwupload -c:v "
			        "h264_vaapi out.mp4'. %s",
			        node, watch_hint);
		else
			dr_action(
			        f,
			        "Transcode on the GPU: 'ffmpeg -hwaccel vaapi -hwaccel_output_format "
			        "vaapi -vaapi_device /dev/dri/%s -i in.mp4 -c:v h264_vaapi out.mp4' "
			        "(from frames in memory: -vf format=nv12,hwupload). %s",
			        node, watch_hint);
		return;
	}
	f = dr_add(
	        r, "setup.video.ffmpeg_no_gpu", DR_WARNING,
	        "ffmpeg (%s) was built without VA-API%s: it cannot use the %s GPU's video engines",
	        ff->abs, intel ? " or QSV" : "", who);
	ffmpeg_evidence(f, ff);
	dr_meaning(f, "Asked for -c:v h264_vaapi it says 'Unknown encoder', and decoding runs on "
	              "the CPU.");
	dr_action(
	        f,
	        "Use an ffmpeg built with VA-API%s: the distribution's ('sudo apt install ffmpeg', "
	        "'sudo dnf install ffmpeg' from RPM Fusion), BtbN's FFmpeg-Builds, or "
	        "jellyfin-ffmpeg. Check with 'ffmpeg -hide_banner -encoders | grep vaapi'. %s",
	        intel ? " and QSV" : "", watch_hint);
}

/* --- run-time libraries ------------------------------------------------------------------- */

static void
check_nvidia_libs(const struct dr_ctx *ctx, struct dr_report *r, const struct vendor_sum *vs,
                  unsigned machine, bool ffmpeg)
{
	static const char *const libs[] = { "libnvidia-encode.so.1", "libnvcuvid.so.1" };
	const char *caps = ctx->getenv("NVIDIA_DRIVER_CAPABILITIES");
	struct strbuf found = STRBUF_INIT, missing = STRBUF_INIT, searched = STRBUF_INIT;
	struct dirs d = { NULL, 0, 0 };
	struct dr_finding *f;
	char branch[16] = "";

	dirs_add_list(&d, ctx->getenv("LD_LIBRARY_PATH"), NULL);
	dirs_add_system(ctx, &d, machine);
	for (size_t i = 0; i < 2; i++) {
		char abs[4096], path[4096];

		if (i == 0 && vs->no_nvenc)
			continue;
		if (find_in(ctx, &d, libs[i], abs, sizeof(abs), path, sizeof(path)))
			strbuf_addf(&found, "%s%s", found.len ? ", " : "", abs);
		else
			strbuf_addf(&missing, "%s%s", missing.len ? " and " : "", libs[i]);
	}
	if (!missing.len) {
		f = dr_add(r, "setup.video.nvidia_libs", DR_OK,
		           "NVIDIA's video libraries are installed: %s", found.buf);
		dr_evidence(f, "found: %s", found.buf);
		goto out;
	}
	dirs_join(&d, &searched);
	if (ctx->snap && ctx->snap->nvidia.driver_version[0])
		snprintf(branch, sizeof(branch), "%.*s",
		         (int)strcspn(ctx->snap->nvidia.driver_version, "."),
		         ctx->snap->nvidia.driver_version);
	/* a warning where an ffmpeg would use them; a note on a machine without one */
	f = dr_add(r, "setup.video.nvidia_libs_missing", ffmpeg ? DR_WARNING : DR_INFO,
	           "%s not found: NVENC/NVDEC cannot be opened", missing.buf);
	dr_evidence(f, "searched LD_LIBRARY_PATH, ld.so.conf and the default directories: %s",
	            searched.buf);
	if (found.len)
		dr_evidence(f, "found: %s", found.buf);
	if (caps)
		dr_evidence(f, "environment: NVIDIA_DRIVER_CAPABILITIES=%s%s", caps,
		            strstr(caps, "video") || strstr(caps, "all")
		                    ? ""
		                    : " (no 'video': the "
		                      "container gets no video "
		                      "libraries)");
	dr_meaning(f,
	           "ffmpeg (and OBS, HandBrake, Jellyfin) open NVENC through "
	           "libnvidia-encode.so.1 and NVDEC through libnvcuvid.so.1, both part of the "
	           "driver but packaged apart; without them h264_nvenc fails with 'Cannot load "
	           "libnvidia-encode.so.1' and -hwaccel cuda with 'Cannot load libnvcuvid.so.1'.");
	dr_action(f,
	          "Install the driver's video libraries, of the same version as the driver: Ubuntu "
	          "'sudo apt install libnvidia-encode-%s libnvidia-decode-%s', Debian 'sudo apt "
	          "install libnvidia-encode1 libnvcuvid1', Fedora (RPM Fusion) 'sudo dnf install "
	          "xorg-x11-drv-nvidia-cuda-libs'; NVIDIA's .run installer includes them. In a "
	          "container, start it with NVIDIA_DRIVER_CAPABILITIES=compute,video,utility (or "
	          "all), e.g. docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all.",
	          branch[0] ? branch : "<branch>", branch[0] ? branch : "<branch>");
out:
	strbuf_release(&found);
	strbuf_release(&missing);
	strbuf_release(&searched);
	dirs_release(&d);
}

static void
check_va_driver(const struct dr_ctx *ctx, struct dr_report *r, bool intel, unsigned machine)
{
	static const char *const intel_drv[] = { "iHD_drv_video.so", "i965_drv_video.so" };
	static const char *const amd_drv[] = { "radeonsi_drv_video.so" };
	const char *const *names = intel ? intel_drv : amd_drv;
	size_t nr_names = intel ? 2 : 1;
	const char *env = ctx->getenv("LIBVA_DRIVERS_PATH");
	const char *triple = multiarch(machine);
	struct dirs d = { NULL, 0, 0 };
	struct strbuf searched = STRBUF_INIT;
	struct dr_finding *f;
	char buf[256];

	if (env && *env) {
		dirs_add_list(&d, env, NULL);
	} else {
		if (triple) {
			snprintf(buf, sizeof(buf), "/usr/lib/%s/dri", triple);
			dirs_add(&d, buf, strlen(buf));
		}
		/* Fedora's libva: RPM Fusion's drivers first (dri-nonfree, dri-freeworld) */
		dirs_add(&d, "/usr/lib64/dri-nonfree", 22);
		dirs_add(&d, "/usr/lib64/dri-freeworld", 24);
		dirs_add(&d, "/usr/lib64/dri", 14);
		dirs_add(&d, "/usr/lib/dri", 12);
		dirs_add(&d, "/usr/local/lib/dri", 18);
	}
	for (size_t i = 0; i < nr_names; i++) {
		char abs[4096], path[4096];

		if (find_in(ctx, &d, names[i], abs, sizeof(abs), path, sizeof(path))) {
			f = dr_add(r, "setup.video.va_driver", DR_OK,
			           "the VA-API driver for the %s GPU is installed: %s",
			           intel ? "Intel" : "AMD", abs);
			dr_evidence(f, "found: %s", abs);
			goto out;
		}
	}
	dirs_join(&d, &searched);
	f = dr_add(r, "setup.video.va_driver_missing", DR_WARNING,
	           "no VA-API driver for the %s GPU (%s)", intel ? "Intel" : "AMD",
	           intel ? "iHD_drv_video.so or i965_drv_video.so" : "radeonsi_drv_video.so");
	dr_evidence(f, "searched %s: %s",
	            env && *env ? "LIBVA_DRIVERS_PATH" : "the VA driver directories", searched.buf);
	dr_meaning(f, "VA-API programs (ffmpeg -hwaccel vaapi, h264_vaapi, h264_qsv, browsers, "
	              "mpv, GStreamer) fail with 'vaInitialize failed' or fall back to the CPU.");
	if (intel)
		dr_action(f, "Install Intel's media driver: Debian, Ubuntu 'sudo apt install "
		             "intel-media-va-driver-non-free' (or intel-media-va-driver; "
		             "i965-va-driver for GPUs before Broadwell); Fedora 'sudo dnf install "
		             "intel-media-driver'. Check with 'vainfo'.");
	else
		dr_action(
		        f,
		        "Install Mesa's VA driver: Debian, Ubuntu 'sudo apt install "
		        "mesa-va-drivers'; Fedora 'sudo dnf install mesa-va-drivers-freeworld' "
		        "(RPM Fusion; Fedora's own build has no H.264/HEVC). Check with 'vainfo'.");
out:
	strbuf_release(&searched);
	dirs_release(&d);
}

/* Without a snapshot: the vendors from the PCI bus (GPUs with a driver). */
static void
sum_from_pci(const struct dr_ctx *ctx, struct vendor_sum sum[3])
{
	struct pci_gpu *g = NULL;
	size_t nr = 0;

	pci_list_gpus(ctx->cfg->sysfs_root, &g, &nr, NULL);
	for (size_t i = 0; i < nr; i++) {
		if (!g[i].driver[0] || !strcmp(g[i].driver, "vfio-pci"))
			continue;
		if (g[i].vendor == PCI_VENDOR_NVIDIA && !strcmp(g[i].driver, "nvidia")) {
			sum[0].nr++;
			sum[0].nvidia_driver = true;
		} else if (g[i].vendor == PCI_VENDOR_AMD) {
			sum[1].nr++;
		} else if (g[i].vendor == PCI_VENDOR_INTEL) {
			sum[2].nr++;
		}
	}
	free(g);
}

/* The render node of the first DRM GPU of a vendor, from the snapshot's card name. */
static void
find_render_node(const struct dr_ctx *ctx, enum gpu_vendor v, char *buf, size_t size)
{
	const struct gpu_snapshot *s = ctx->snap;
	char rel[256], dir[4096];
	struct dirent *de;
	DIR *d;

	buf[0] = '\0';
	for (size_t i = 0; s && i < s->nr_dev; i++) {
		if (s->dev[i].vendor != v || !s->dev[i].card[0])
			continue;
		snprintf(rel, sizeof(rel), "class/drm/%s/device/drm", s->dev[i].card);
		d = opendir(path_join(dir, sizeof(dir), ctx->cfg->sysfs_root, rel));
		if (!d)
			return;
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "renderD", 7)) {
				str_copy(buf, size, de->d_name);
				break;
			}
		closedir(d);
		return;
	}
}

void
dr_check_video(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct vendor_sum sum[3];
	struct ffmpeg *ff = xcalloc(1, sizeof(*ff));

	memset(sum, 0, sizeof(sum));
	if (ctx->snap)
		check_engines(ctx, r, sum);
	else
		sum_from_pci(ctx, sum);
	if (!sum[0].nr && !sum[1].nr && !sum[2].nr)
		goto out;
	find_render_node(ctx, VENDOR_AMD, sum[1].render, sizeof(sum[1].render));
	find_render_node(ctx, VENDOR_INTEL, sum[2].render, sizeof(sum[2].render));
	ffmpeg_read(ctx, ff);
	if (!ff->on_path) {
		struct dr_finding *f = dr_add(r, "setup.video.no_ffmpeg", DR_INFO,
		                              "no ffmpeg on PATH: its GPU support was not checked");
		const char *path = ctx->getenv("PATH");

		dr_evidence(f, "PATH=%s",
		            path && *path ? path : "(unset: the default directories)");
	} else if (ff->unchecked) {
		struct dr_finding *f = dr_add(r, "setup.video.no_ffmpeg", DR_INFO,
		                              "ffmpeg (%s) %s: its GPU support was not checked",
		                              ff->abs, ff->unchecked);

		dr_evidence(f, "%s: %s", ff->abs, ff->unchecked);
	} else if (ff->lib_missing) {
		struct dr_finding *f =
		        dr_add(r, "setup.video.no_ffmpeg", DR_INFO,
		               "ffmpeg (%s) needs %s, which was not found", ff->abs, ff->avcodec);

		dr_evidence(f, "%s: DT_NEEDED %s", ff->abs, ff->avcodec);
		dr_evidence(f, "searched: %s", ff->searched);
	} else {
		if (sum[0].nr && sum[0].nvidia_driver)
			ffmpeg_nvidia(r, ff, &sum[0]);
		if (sum[1].nr)
			ffmpeg_vaapi(r, ff, &sum[1], false);
		if (sum[2].nr)
			ffmpeg_vaapi(r, ff, &sum[2], true);
	}
	if (sum[0].nr && sum[0].nvidia_driver)
		check_nvidia_libs(ctx, r, &sum[0], ff->machine, ff->on_path);
	if (sum[1].nr)
		check_va_driver(ctx, r, false, ff->machine);
	if (sum[2].nr)
		check_va_driver(ctx, r, true, ff->machine);
out:
	free(ff);
}
