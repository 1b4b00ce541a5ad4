/*
 * gpuscope __man NAME: the manual page gpuscope-NAME(1) of a command, in
 * man(7) roff, made from the table of commands (cmd/cli.h), so that it says
 * what the command takes; a command with subcommands ("queue submit") has
 * them as sections of its page. gpuscope __man --list: the pages' names, one
 * a line. mk/man.mk writes every page at build time; man/gpuscope.1 stays
 * the hand-written overview.
 *
 * The date on a page is SOURCE_DATE_EPOCH's (reproducible builds: a package
 * sets it to its changelog's date), else the release's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cli.h"
#include "cmd/cmd.h"
#include "core/xalloc.h"

/* the pages' date when SOURCE_DATE_EPOCH is not set: that of this release */
#define MAN_RELEASE_DATE "2026-11-30"

/* the usual exit codes, as man/gpuscope.1 says them */
static const char *const usual_exit[][2] = {
	{ "0", "All went well." },
	{ "1", "The output was printed, but a GPU is lost, needs a reset, refused access, or did "
	       "not answer in time." },
	{ "2", "Usage error: an unknown option or command, an ID that matches no GPU, an unknown "
	       "query field." },
	{ "3", "Something failed while running: the output could not be written, a recording "
	       "could not be read or written, or the driver did not start within six times the "
	       "timeout." },
	{ "4", "No GPU, or no driver to read one; the reason is printed." },
};

/*
 * Write the n bytes at s as roff text: '\' as \e, '-' as \- (a minus, not a
 * hyphen: options are typed), a '.' or '\'' that begins a line behind \&
 * (else the line is a request), a tab as a space, and every non-ASCII
 * character as \[uXXXX] (troff reads its input as Latin-1 unless told). At a
 * line's start when at_bol; returns whether the text ended at one.
 */
static bool
roff_escape(FILE *out, const char *s, size_t n, bool at_bol)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned char ch = *p;

		if (at_bol && (ch == '.' || ch == '\''))
			fputs("\\&", out);
		at_bol = ch == '\n';
		if (ch == '\\') {
			fputs("\\e", out);
		} else if (ch == '-') {
			fputs("\\-", out);
		} else if (ch == '\t') {
			fputc(' ', out);
		} else if (ch < 0x80) {
			fputc(ch, out);
		} else {
			/* UTF-8: its code point, or '?' for a byte that starts none */
			unsigned len = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
			unsigned long cp = ch & (0x7f >> len);
			unsigned i;

			for (i = 1; i < len && p + i < end && (p[i] & 0xc0) == 0x80; i++)
				cp = cp << 6 | (p[i] & 0x3f);
			if (len == 1 || i < len || cp < 0x80 || (cp >= 0xd800 && cp <= 0xdfff) ||
			    cp > 0x10ffff) {
				fputc('?', out);
				p += i;
				continue;
			}
			fprintf(out, "\\[u%04lX]", cp);
			p += len;
			continue;
		}
		p++;
	}
	return at_bol;
}

static void
roff_str(FILE *out, const char *s)
{
	roff_escape(out, s, strlen(s), false);
}

/* s as one argument of a request, in double quotes */
static void
roff_arg(FILE *out, const char *s)
{
	fputc('"', out);
	while (*s) {
		size_t n = strcspn(s, "\"\n");

		roff_escape(out, s, n, false);
		s += n;
		if (*s)
			fputs(*s++ == '"' ? "\\(dq" : " ", out);
	}
	fputc('"', out);
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t';
}

/* the length of the line at s, without its newline and trailing blanks */
static size_t
line_len(const char *s, const char **next)
{
	const char *e = strchr(s, '\n');
	size_t n;

	if (!e)
		e = s + strlen(s);
	*next = *e ? e + 1 : e;
	n = (size_t)(e - s);
	while (n && blank(s[n - 1]))
		n--;
	return n;
}

static bool
line_is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!blank(s[i]))
			return false;
	return true;
}

/*
 * Plain text, paragraphs separated by blank lines, as roff: paragraphs after
 * the first begin with par (".PP", or ".IP" inside an option's .TP). A
 * paragraph whose lines are all indented (a list of commands, a table) is
 * kept as it is written (.nf), indented; the others are filled, each line's
 * indent dropped. Roff text must have no blank line: troff would print it.
 */
static void
roff_paragraphs(FILE *out, const char *text, const char *par)
{
	const char *s = text, *next;
	bool first = true;

	while (*s) {
		const char *start, *end;
		bool indented = true;
		size_t n, cut = (size_t)-1;

		/* skip blank lines; the paragraph is the lines up to the next blank one */
		n = line_len(s, &next);
		if (line_is_blank(s, n)) {
			s = next;
			continue;
		}
		start = s;
		for (end = s; *end;) {
			size_t k = 0;

			n = line_len(end, &next);
			if (line_is_blank(end, n))
				break;
			while (k < n && blank(end[k]))
				k++;
			if (!k)
				indented = false;
			if (k < cut)
				cut = k;
			end = next;
		}
		if (!first)
			fprintf(out, "%s\n", par);
		first = false;
		if (indented)
			fputs(".RS\n.nf\n", out);
		for (s = start; s < end; s = next) {
			size_t k = 0;

			n = line_len(s, &next);
			if (indented) {
				k = cut;
			} else {
				while (k < n && blank(s[k]))
					k++;
			}
			roff_escape(out, s + k, n - k, true);
			fputc('\n', out);
		}
		if (indented)
			fputs(".fi\n.RE\n", out);
		s = end;
	}
}

/*
 * An exit status in plain text: a paragraph "CODE: what it means" ("0: pass.",
 * "128 + the signal: ...") as a .TP entry with CODE in bold, any other as a
 * paragraph of its own.
 */
static void
man_exit_status(FILE *out, const char *text)
{
	const char *s = text;
	bool first = true;

	while (*s) {
		const char *end, *colon;
		size_t n;
		char *par;

		while (*s == '\n' || blank(*s))
			s++;
		if (!*s)
			break;
		end = strstr(s, "\n\n");
		n = end ? (size_t)(end - s) : strlen(s);
		par = xstrndup(s, n);
		colon = strstr(par, ": ");
		if (par[0] >= '0' && par[0] <= '9' && colon && colon - par <= 24 &&
		    !memchr(par, '\n', (size_t)(colon - par))) {
			fputs(".TP\n\\fB", out);
			roff_escape(out, par, (size_t)(colon - par), false);
			fputs("\\fR\n", out);
			roff_paragraphs(out, colon + 2, ".IP");
		} else {
			if (!first)
				fputs(".PP\n", out);
			roff_paragraphs(out, par, ".PP");
		}
		free(par);
		first = false;
		s += n;
	}
}

/* text whose first letter is made a capital and that ends with a full stop */
static void
roff_sentence(FILE *out, const char *text)
{
	size_t n = strlen(text);

	while (n && (blank(text[n - 1]) || text[n - 1] == '\n'))
		n--;
	if (!n)
		return;
	if (text[0] >= 'a' && text[0] <= 'z') {
		fputc(text[0] - 'a' + 'A', out);
		roff_escape(out, text + 1, n - 1, false);
	} else {
		roff_escape(out, text, n, true);
	}
	fputs(strchr(".!?", text[n - 1]) ? "\n" : ".\n", out);
}

/* "a,b,c" as \fBa\fR|\fBb\fR|\fBc\fR, with sep between them */
static void
roff_choices(FILE *out, const char *choices, const char *sep)
{
	const char *s = choices;

	while (*s) {
		size_t n = strcspn(s, ",");

		fputs("\\fB", out);
		roff_escape(out, s, n, false);
		fputs("\\fR", out);
		s += n;
		if (*s) {
			s++;
			fputs(sep, out);
		}
	}
}

/* the .TP entry of one option: -d, --interval=SEC, then what it does */
static void
man_option(FILE *out, const struct cli_option *o)
{
	const char *mv = o->metavar;

	fputs(".TP\n", out);
	if (o->short_name) {
		fputs("\\fB\\-", out);
		roff_escape(out, &o->short_name, 1, false);
		fputs("\\fR, ", out);
	}
	fputs("\\fB\\-\\-", out);
	roff_str(out, o->name);
	fputs("\\fR", out);
	if (o->value != CLI_NONE) {
		if (!mv && !o->choices)
			mv = "VALUE";
		fputs(o->optional ? "[=" : "=", out);
		if (mv) {
			fputs("\\fI", out);
			roff_str(out, mv);
			fputs("\\fR", out);
			if (o->list && !strchr(mv, ','))
				fputs("[,...]", out);
		} else {
			roff_choices(out, o->choices, "|");
			if (o->list)
				fputs("[,...]", out);
		}
		if (o->optional)
			fputc(']', out);
	}
	fputc('\n', out);
	if (o->help && *o->help)
		roff_paragraphs(out, o->help, ".IP");
	else
		fputs("(no description)\n", out);
	if (o->choices && mv) {
		fputs(".IP\n\\fI", out);
		roff_str(out, mv);
		fputs(o->list ? "\\fR: one or more of " : "\\fR: one of ", out);
		roff_choices(out, o->choices, ", ");
		fputs(".\n", out);
	}
}

static bool
has_options(const struct cli_option *opts)
{
	for (; opts && opts->name; opts++)
		if (!opts->hidden)
			return true;
	return false;
}

static void
man_options(FILE *out, const struct cli_option *opts)
{
	for (; opts && opts->name; opts++)
		if (!opts->hidden)
			man_option(out, opts);
}

/* what an option's name is made of (--web.listen-address), and a metavariable (FILE, ID) */
static bool
opt_char(char c)
{
	return c == '-' || c == '.' || c == '_' || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool
upper_char(char c)
{
	return (c >= 'A' && c <= 'Z') || c == '_';
}

/* the n bytes at s in font ("B", "I"), then roman again */
static void
roff_font(FILE *out, const char *font, const char *s, size_t n)
{
	fprintf(out, "\\f%s", font);
	roff_escape(out, s, n, false);
	fputs("\\fR", out);
}

/*
 * The SYNOPSIS lines of command c: each line of its synopsis after
 * "gpuscope NAME", a line that begins with a blank going on the one before;
 * option names in bold, metavariables (FILE, SEC) in italics.
 */
static void
man_synopsis(FILE *out, const struct cli_command *c, bool *first)
{
	const char *s = c->synopsis ? c->synopsis : "", *next;

	do {
		size_t n = line_len(s, &next), i = 0;

		while (i < n && blank(s[i]))
			i++;
		if (!i || !*first) {
			if (!*first)
				fputs(".br\n", out);
			if (!i) {
				fputs(".B gpuscope ", out);
				roff_str(out, c->name);
				fputc('\n', out);
			}
		}
		*first = false;
		if (i == n) {
			s = next;
			continue;
		}
		while (i < n) {
			size_t k = i + 1;
			bool word_start = i == 0 || strchr(" [|(,=", s[i - 1]);

			if (word_start && s[i] == '-') {
				while (k < n && opt_char(s[k]))
					k++;
				roff_font(out, "B", s + i, k - i);
				/* "--ctx N": the option and its value on one line of the page */
				if (k + 1 < n && s[k] == ' ' && !strchr("[]|-", s[k + 1])) {
					fputs("\\ ", out);
					k++;
				}
			} else if (word_start && upper_char(s[i])) {
				while (k < n && (upper_char(s[k]) || (s[k] >= '0' && s[k] <= '9')))
					k++;
				roff_font(out, "I", s + i, k - i);
			} else {
				roff_escape(out, s + i, 1, i == 0);
			}
			i = k;
		}
		fputc('\n', out);
		s = next;
	} while (*s);
}

/* the subcommands of c ("queue submit" for "queue") in table order */
static const struct cli_command *
sub_next(const struct cli_command *c, unsigned *i)
{
	size_t n = strlen(c->name);

	while (*i < cli_command_count()) {
		const struct cli_command *s = cli_command_at((*i)++);

		if (!s->hidden && !strncmp(s->name, c->name, n) && s->name[n] == ' ')
			return s;
	}
	return NULL;
}

/* "COMMAND LINE  what it shows" lines as .TP entries */
static void
man_examples(FILE *out, const char *text)
{
	const char *s = text, *next;
	bool first = true;

	while (*s) {
		size_t n = line_len(s, &next), i = 0, cmd, j;

		while (i < n && blank(s[i]))
			i++;
		if (i == n) {
			s = next;
			continue;
		}
		for (cmd = i; cmd < n && !(blank(s[cmd]) && cmd + 1 < n && blank(s[cmd + 1]));
		     cmd++)
			;
		for (j = cmd; j < n && blank(s[j]); j++)
			;
		/* an example without words of its own: a paragraph (but none right after .SH) */
		fputs(j < n ? ".TP\n\\fB" : first ? "\\fB" : ".PP\n\\fB", out);
		first = false;
		roff_escape(out, s + i, cmd - i, false);
		fputs("\\fR\n", out);
		if (j < n) {
			roff_escape(out, s + j, n - j, true);
			fputc('\n', out);
		}
		s = next;
	}
}

/* "gpuscope-watch(1), nvidia-smi(1)" after gpuscope(1), each as .BR NAME (N) */
static void
man_see_also(FILE *out, const char *list)
{
	const char *s = list ? list : "";

	fputs(".BR gpuscope (1)", out);
	while (*s) {
		size_t n, k;
		const char *par;

		while (*s == ',' || blank(*s) || *s == '\n')
			s++;
		n = strcspn(s, ",\n");
		k = n;
		while (k && blank(s[k - 1]))
			k--;
		if (!k) {
			s += n;
			continue;
		}
		if (k == 11 && !strncmp(s, "gpuscope(1)", 11)) {
			s += n;
			continue;
		}
		fputs(",\n", out);
		par = memchr(s, '(', k);
		if (par && s[k - 1] == ')' && par > s) {
			fputs(".BR ", out);
			roff_escape(out, s, (size_t)(par - s), false);
			fputc(' ', out);
			roff_escape(out, par, k - (size_t)(par - s), false);
		} else {
			roff_escape(out, s, k, true);
		}
		s += n;
	}
	fputc('\n', out);
}

/*
 * The date for .TH: SOURCE_DATE_EPOCH's, in UTC, when it is set; else the
 * release's. Returns false, having said why, when it is not a number.
 */
static bool
man_date(char *buf, size_t size)
{
	const char *v = getenv("SOURCE_DATE_EPOCH");
	char *end;
	long long t;
	time_t tt;
	struct tm tm;

	if (!v || !*v) {
		snprintf(buf, size, "%s", MAN_RELEASE_DATE);
		return true;
	}
	errno = 0;
	t = strtoll(v, &end, 10);
	tt = (time_t)t;
	if (errno || *end || t < 0 || (long long)tt != t || !gmtime_r(&tt, &tm) ||
	    !strftime(buf, size, "%Y-%m-%d", &tm)) {
		cmd_error(
		        "SOURCE_DATE_EPOCH='%s' is not a number of seconds since 1970; unset it or "
		        "set it to one (date +%%s)",
		        v);
		return false;
	}
	return true;
}

/* how long a text line of a page may be before it is broken (man pages keep to 80 columns) */
#define ROFF_WIDTH 78

/*
 * Write the page, its text lines longer than ROFF_WIDTH bytes broken at
 * blanks, but for those between .nf and .fi, which are shown as they are. A
 * piece that would begin with '.' or '\'' is put behind \&. A blank behind
 * a backslash is not one: "\ " keeps an option and its value together.
 */
static void
roff_wrap(FILE *out, const char *page)
{
	const char *s, *next;
	bool nofill = false;

	for (s = page; *s; s = next) {
		size_t n = line_len(s, &next), i = 0;

		if (s[0] == '.' || s[0] == '\'') {
			if (!strncmp(s, ".nf", 3))
				nofill = true;
			else if (!strncmp(s, ".fi", 3))
				nofill = false;
		}
		if (s[0] == '.' || s[0] == '\'' || nofill || n <= ROFF_WIDTH) {
			fwrite(s, 1, n, out);
			fputc('\n', out);
			continue;
		}
		while (i < n) {
			size_t end, stop;

			while (i < n && blank(s[i]))
				i++;
			if (i == n)
				break;
			end = i + ROFF_WIDTH;
			if (end >= n) {
				end = n;
			} else {
				/* the last blank that leaves the piece short enough, else the
				 * word's end */
				stop = end;
				while (stop > i && !(blank(s[stop]) && s[stop - 1] != '\\'))
					stop--;
				if (stop > i) {
					end = stop;
				} else {
					while (end < n && !(blank(s[end]) && s[end - 1] != '\\'))
						end++;
				}
			}
			stop = end;
			while (stop > i + 1 && blank(s[stop - 1]) && s[stop - 2] != '\\')
				stop--;
			if (s[i] == '.' || s[i] == '\'')
				fputs("\\&", out);
			fwrite(s + i, 1, stop - i, out);
			fputc('\n', out);
			i = end;
		}
	}
}

static int
man_page(FILE *out, const struct cli_command *c)
{
	const struct cli_command *sub;
	char date[32];
	unsigned i;
	bool first = true;

	if (!man_date(date, sizeof(date)))
		return EXIT_USAGE;
	fprintf(out,
	        ".\\\" gpuscope-%s(1), made by 'gpuscope __man %s' from the table of commands\n",
	        c->name, c->name);
	fputs(".\\\" (src/cmd/cli_table_*.c): change it there, not here\n", out);
	fputs(".TH GPUSCOPE\\-", out);
	for (const char *p = c->name; *p; p++) {
		char up = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;

		roff_escape(out, &up, 1, false);
	}
	fprintf(out, " 1 %s \"gpuscope %s\" \"User Commands\"\n", date, GPUSCOPE_VERSION);
	/* no hyphens added inside option names and paths, no gaps to justify a line */
	fputs(".nh\n.ad l\n", out);

	fputs(".SH NAME\n", out);
	fprintf(out, "gpuscope-%s \\- ", c->name);
	roff_str(out, c->summary ? c->summary : c->name);
	fputs("\n.SH SYNOPSIS\n", out);
	man_synopsis(out, c, &first);
	for (i = 0; (sub = sub_next(c, &i));)
		man_synopsis(out, sub, &first);

	fputs(".SH DESCRIPTION\n", out);
	if (c->description && *c->description)
		roff_paragraphs(out, c->description, ".PP");
	else
		roff_sentence(out, c->summary ? c->summary : c->name);

	if (has_options(c->options)) {
		fputs(".SH OPTIONS\n", out);
		man_options(out, c->options);
	}

	i = 0;
	if (sub_next(c, &i)) {
		fputs(".SH COMMANDS\n", out);
		for (i = 0; (sub = sub_next(c, &i));) {
			fputs(".SS ", out);
			roff_arg(out, sub->name + strlen(c->name) + 1);
			fputs("\n", out);
			first = true;
			man_synopsis(out, sub, &first);
			fputs(".PP\n", out);
			if (sub->description && *sub->description)
				roff_paragraphs(out, sub->description, ".PP");
			else
				roff_sentence(out, sub->summary ? sub->summary : sub->name);
			man_options(out, sub->options);
			if (sub->exit_status && *sub->exit_status) {
				fputs(".PP\nExit status:\n", out);
				man_exit_status(out, sub->exit_status);
			}
		}
	}

	fputs(".SH GLOBAL OPTIONS\n", out);
	fputs("These go before or after the command; see \\fBgpuscope\\fR(1).\n", out);
	man_options(out, cli_global_options);

	fputs(".SH EXIT STATUS\n", out);
	if (c->exit_status && *c->exit_status) {
		man_exit_status(out, c->exit_status);
	} else {
		for (i = 0; i < sizeof(usual_exit) / sizeof(usual_exit[0]); i++) {
			fprintf(out, ".TP\n.B %s\n", usual_exit[i][0]);
			roff_paragraphs(out, usual_exit[i][1], ".IP");
		}
	}

	if (c->examples && *c->examples) {
		fputs(".SH EXAMPLES\n", out);
		man_examples(out, c->examples);
	}

	fputs(".SH SEE ALSO\n", out);
	man_see_also(out, c->see_also);
	return EXIT_OK;
}

static const char man_usage[] = "usage: gpuscope __man NAME | --list | --text";

/* standard input whole, NUL-terminated, or NULL when it cannot be read */
static char *
read_stdin(void)
{
	char buf[4096], *text = NULL;
	size_t n, size = 0;
	FILE *mem = open_memstream(&text, &size);

	if (!mem)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), stdin)))
		fwrite(buf, 1, n, mem);
	if (fclose(mem) || ferror(stdin)) {
		free(text);
		return NULL;
	}
	return text;
}

int
cmd_man(int argc, char **argv)
{
	const struct cli_command *c = NULL;
	const char *name = argv[argc > 1 ? 1 : 0];
	char *page = NULL, *text = NULL;
	size_t size = 0;
	FILE *mem;
	int rc = EXIT_OK;

	if (argc != 2) {
		cmd_error("%s (NAME: a command, such as fit)", man_usage);
		return EXIT_USAGE;
	}
	if (!strcmp(name, "--list")) {
		for (unsigned i = 0; i < cli_command_count(); i++) {
			c = cli_command_at(i);
			if (!c->hidden && !strchr(c->name, ' '))
				printf("gpuscope-%s\n", c->name);
		}
		return fflush(stdout) || ferror(stdout) ? EXIT_RUNTIME : EXIT_OK;
	}
	if (!strcmp(name, "--text")) {
		/* plain text on standard input as a page's paragraphs: tests/cli/manpages.sh */
		text = read_stdin();
		if (!text) {
			cmd_error("__man --text: cannot read standard input");
			return EXIT_RUNTIME;
		}
	} else {
		if (!strncmp(name, "gpuscope-", 9))
			name += 9;
		c = cli_find(name);
		if (c && !c->hidden && strchr(c->name, ' ')) {
			cmd_error("no manual page for '%s': it is a section of gpuscope-%.*s(1); "
			          "'gpuscope __man --list' lists the pages",
			          name, (int)strcspn(name, " "), name);
			return EXIT_USAGE;
		}
		if (!c || c->hidden) {
			cmd_error("no manual page gpuscope-%s; 'gpuscope __man --list' lists them",
			          name);
			return EXIT_USAGE;
		}
	}
	/* the page is made whole first, then written with its long lines broken */
	mem = open_memstream(&page, &size);
	if (!mem) {
		cmd_error("cannot make the manual page gpuscope-%s: out of memory", name);
		free(text);
		return EXIT_RUNTIME;
	}
	if (text)
		roff_paragraphs(mem, text, ".PP");
	else
		rc = man_page(mem, c);
	if (fclose(mem)) {
		cmd_error("cannot make the manual page gpuscope-%s: out of memory", name);
		rc = EXIT_RUNTIME;
	}
	if (rc == EXIT_OK)
		roff_wrap(stdout, page);
	free(page);
	free(text);
	if (rc == EXIT_OK && (fflush(stdout) || ferror(stdout))) {
		cmd_error("cannot write the manual page gpuscope-%s", name);
		rc = EXIT_RUNTIME;
	}
	return rc;
}
