/*
 * Tests of top.conf (tui/topconf.c): the text written for the settings, the
 * parser (every key, malformed lines ignored and counted, unknown keys
 * kept), where the file is, and reading and writing it (a missing file, a
 * FIFO, a directory, a symbolic link loop and a huge file not read; the
 * write atomic, its directory made, a link kept). The tui objects are not
 * in the library, and this file has no curses in it: it is built in here.
 */
#include "tui/topconf.c"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "harness.h"

static const char defaults_text[] =
        "# gpuscope top's settings, written when it quits (F2 in top changes them).\n"
        "# key=value lines; keys this version does not know are kept, comments are not.\n"
        "# See 'man gpuscope', section top.\n"
        "sort=gpu_mem\n"
        "sort_invert=0\n"
        "tree=0\n"
        "chart=util\n"
        "layout=auto\n"
        "interval=1\n"
        "show_gpus=1\n"
        "show_charts=1\n"
        "show_findings=1\n"
        "show_processes=1\n"
        "detail_all=0\n";

static char tmpdir[] = "/tmp/t_topconf.XXXXXX";

static const char *
path_in(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static char *
read_all(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (file_read_regular(path, &sb, 1 << 20) < 0) {
		strbuf_release(&sb);
		return xstrdup("(unreadable)");
	}
	return strbuf_detach(&sb, NULL);
}

/* Whether dir holds name and nothing else. */
static bool
only_entry(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int seen = 0, other = 0;

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (!strcmp(e->d_name, name))
			seen++;
		else if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			other++;
	closedir(d);
	return seen == 1 && !other;
}

static void
test_format(void)
{
	struct top_conf c, d;
	struct strbuf sb = STRBUF_INIT;

	top_conf_init(&c);
	top_conf_format(&c, &sb);
	is_str(sb.buf, defaults_text, "the defaults' text");
	top_conf_init(&d);
	is_int(top_conf_parse(&d, sb.buf, sb.len, NULL, NULL), 0,
	       "it reads back without a bad line");
	ok(top_conf_equal(&c, &d), "and the same settings");
	d.show_charts = false;
	ok(!top_conf_equal(&c, &d), "a pane hidden: not equal");
	top_conf_copy(&c, &d);
	ok(top_conf_equal(&c, &d), "copied: equal");
	top_conf_release(&c);
	top_conf_release(&d);
	strbuf_release(&sb);
}

static void
test_parse(void)
{
	static const char text[] = "# a comment\n"
	                           "\n"
	                           "  sort = cpu  \n"
	                           "sort_invert=yes\r\n"
	                           "tree=on\n"
	                           "chart=mem_clock\n"
	                           "layout=compact\n"
	                           "interval=2.5\n"
	                           "show_gpus=false\n"
	                           "show_charts=0\n"
	                           "show_findings=off\n"
	                           "show_processes=no\n"
	                           "detail_all=true\n"
	                           "color_scheme=dark\n"
	                           "future.key=a=b";
	struct top_conf c;
	struct strbuf sb = STRBUF_INIT;

	top_conf_init(&c);
	is_int(top_conf_parse(&c, text, strlen(text), NULL, NULL), 0, "every key: no bad line");
	is_int(c.sort, PCOL_CPU, "sort=cpu (blanks around key and value)");
	ok(c.sort_invert, "sort_invert=yes (and a CR at the end)");
	ok(c.tree, "tree=on");
	is_int(c.chart, HM_MEM_CLOCK, "chart=mem_clock");
	is_int(c.layout, TUI_LAYOUT_COMPACT, "layout=compact");
	is_dbl(c.interval, 2.5, 1e-9, "interval=2.5");
	ok(!c.show_gpus && !c.show_charts && !c.show_findings && !c.show_processes,
	   "every pane hidden (false, 0, off, no)");
	ok(c.detail_all, "detail_all=true");
	is_str(c.extra.buf, "color_scheme=dark\nfuture.key=a=b\n",
	       "unknown keys kept, the last line without a newline too");
	top_conf_format(&c, &sb);
	ok(strstr(sb.buf,
	          "sort=cpu\nsort_invert=1\ntree=1\nchart=mem_clock\nlayout=compact\n"
	          "interval=2.5\nshow_gpus=0\nshow_charts=0\nshow_findings=0\n"
	          "show_processes=0\ndetail_all=1\ncolor_scheme=dark\nfuture.key=a=b\n") != NULL,
	   "written back: the values, then the unknown keys");
	ok(!strstr(sb.buf, "a comment"), "comments are not kept");
	top_conf_release(&c);
	strbuf_release(&sb);
}

static void
test_malformed(void)
{
	static const char text[] = "sort=gpu\n"
	                           "this is no setting\n"
	                           "chart=bogus\n"
	                           "interval=0.05\n"
	                           "interval=86401\n"
	                           "interval=2x\n"
	                           "interval=\n"
	                           "sort=\n"
	                           "tree=2\n"
	                           "bad key=1\n"
	                           "=1\n"
	                           "layout=full\n";
	struct top_conf c;
	struct strbuf why = STRBUF_INIT;
	int line = 0;

	top_conf_init(&c);
	is_int(top_conf_parse(&c, text, strlen(text), &line, &why), 10, "ten bad lines counted");
	is_int(line, 2, "the first is line 2");
	is_str(why.buf, "not key=value", "and what is wrong with it");
	is_int(c.sort, PCOL_GPU, "a good line before them applies");
	is_int(c.layout, TUI_LAYOUT_FULL, "and one after them");
	is_int(c.chart, HM_UTIL, "a bad value leaves the setting as it was");
	is_dbl(c.interval, 1, 1e-9, "intervals out of range or not numbers: ignored");
	is_str(c.extra.buf, "", "a bad key is not kept");
	top_conf_parse(&c, "chart=bogus\n", 12, &line, &why);
	is_str(why.buf, "'bogus' is no value for 'chart'", "a bad value: named with its key");
	is_int(top_conf_parse(&c, "tree=1\0\n", 8, &line, &why), 1, "a NUL byte: a bad line");
	ok(!c.tree, "and not applied");
	top_conf_release(&c);
	strbuf_release(&why);
}

static void
test_path(void)
{
	char buf[512];

	setenv("XDG_CONFIG_HOME", "/x/conf", 1);
	setenv("HOME", "/home/u", 1);
	is_int(top_conf_path(buf, sizeof(buf)), 0, "XDG_CONFIG_HOME set");
	is_str(buf, "/x/conf/gpuscope/top.conf", "the file under it");
	setenv("XDG_CONFIG_HOME", "rel/conf", 1);
	top_conf_path(buf, sizeof(buf));
	is_str(buf, "/home/u/.config/gpuscope/top.conf", "a relative one is ignored: HOME's");
	unsetenv("XDG_CONFIG_HOME");
	top_conf_path(buf, sizeof(buf));
	is_str(buf, "/home/u/.config/gpuscope/top.conf", "unset: under HOME");
	unsetenv("HOME");
	is_int(top_conf_path(buf, sizeof(buf)), E_NOTFOUND, "neither: no path");
	setenv("HOME", "/home/u", 1);
	is_int(top_conf_path(buf, 10), E_NOTFOUND, "a path too long for the buffer: none");
}

static void
test_load(void)
{
	struct top_conf c;
	struct err err = ERR_INIT;
	struct strbuf big = STRBUF_INIT;

	top_conf_init(&c);
	is_int(top_conf_load(&c, path_in("none.conf"), &err), 0, "a missing file: no error");
	is_int(err.code, 0, "and no note");

	write_file(path_in("good.conf"), "chart=power\nshow_findings=0\n");
	is_int(top_conf_load(&c, path_in("good.conf"), &err), 0, "a file read");
	ok(c.chart == HM_POWER && !c.show_findings, "its settings applied");

	write_file(path_in("bad.conf"), "tree=1\nnonsense\n");
	err_clear(&err);
	is_int(top_conf_load(&c, path_in("bad.conf"), &err), 0, "a malformed line: still read");
	is_int(err.code, E_PARSE, "with a note");
	ok(strstr(err.msg, "bad.conf' line 2: not key=value; that line ignored") != NULL,
	   "that names the file and the line (%s)", err.msg);
	ok(c.tree, "the good line applied");

	mkdir(path_in("dir.conf"), 0755);
	err_clear(&err);
	ok(top_conf_load(&c, path_in("dir.conf"), &err) < 0, "a directory: not read");
	ok(strstr(err.msg, "is not a regular file") != NULL, "said so (%s)", err.msg);

	mkfifo(path_in("fifo.conf"), 0644);
	err_clear(&err);
	ok(top_conf_load(&c, path_in("fifo.conf"), &err) < 0, "a FIFO: not read, and no wait");

	symlink(path_in("loop2.conf"), path_in("loop1.conf"));
	symlink(path_in("loop1.conf"), path_in("loop2.conf"));
	err_clear(&err);
	ok(top_conf_load(&c, path_in("loop1.conf"), &err) < 0, "a symbolic link loop: not read");
	ok(strstr(err.msg, "cannot read") != NULL, "said so (%s)", err.msg);

	strbuf_addchars(&big, '#', TOP_CONF_MAX);
	strbuf_addstr(&big, "\ntree=0\n");
	write_file(path_in("big.conf"), big.buf);
	err_clear(&err);
	ok(top_conf_load(&c, path_in("big.conf"), &err) < 0, "a file over 64 KiB: not read");
	ok(strstr(err.msg, "bigger than 64 KiB") != NULL, "said so (%s)", err.msg);
	ok(c.tree, "nothing of it applied");
	top_conf_release(&c);
	strbuf_release(&big);
}

static void
test_save(void)
{
	struct top_conf c, d;
	struct err err = ERR_INIT;
	struct strbuf want = STRBUF_INIT;
	struct stat st;
	char *got, link_to[512];
	ssize_t n;

	umask(022);
	top_conf_init(&c);
	c.chart = HM_TEMP;
	strbuf_addstr(&c.extra, "kept=1\n");
	top_conf_format(&c, &want);
	is_int(top_conf_save(&c, path_in("a/b/gpuscope/top.conf"), &err), 0,
	       "saved where the directories do not exist yet");
	got = read_all(path_in("a/b/gpuscope/top.conf"));
	is_str(got, want.buf, "the text of the settings");
	free(got);
	ok(stat(path_in("a/b/gpuscope"), &st) == 0 && (st.st_mode & 0777) == 0700,
	   "a made directory is 0700");
	ok(stat(path_in("a/b/gpuscope/top.conf"), &st) == 0 && (st.st_mode & 0777) == 0644,
	   "the file is 0644 less the umask");
	ok(only_entry(path_in("a/b/gpuscope"), "top.conf"), "no temporary file left");

	top_conf_init(&d);
	top_conf_load(&d, path_in("a/b/gpuscope/top.conf"), &err);
	ok(top_conf_equal(&c, &d), "what is saved loads back the same");

	/* a link to a dotfiles repository's file: that file is replaced, the link stays */
	write_file(path_in("real.conf"), "tree=1\n");
	symlink(path_in("real.conf"), path_in("link.conf"));
	is_int(top_conf_save(&c, path_in("link.conf"), &err), 0, "saved through a link");
	n = readlink(path_in("link.conf"), link_to, sizeof(link_to) - 1);
	ok(n > 0 && lstat(path_in("link.conf"), &st) == 0 && S_ISLNK(st.st_mode),
	   "the link is still a link");
	got = read_all(path_in("real.conf"));
	is_str(got, want.buf, "and the file it points to has the settings");
	free(got);

	/* a file where the directory should be: fails, as root too */
	err_clear(&err);
	write_file(path_in("file"), "x");
	ok(top_conf_save(&c, path_in("file/gpuscope/top.conf"), &err) < 0,
	   "a directory that cannot be made: an error");
	ok(strstr(err.msg, "cannot make the directory") != NULL, "that says why (%s)", err.msg);
	top_conf_release(&c);
	top_conf_release(&d);
	strbuf_release(&want);
}

int
main(void)
{
	char cmd[600];

	if (!mkdtemp(tmpdir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	test_format();
	test_parse();
	test_malformed();
	test_path();
	test_load();
	test_save();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		diag("could not remove %s", tmpdir);
	return done_testing();
}
