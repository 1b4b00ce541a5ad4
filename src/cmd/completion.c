/*
 * gpuscope completion bash|zsh|fish: the shell's completion script, made from
 * the one table of commands and options (cmd/cli.h), so that it cannot drift
 * from the code; and gpuscope __complete KIND, which the scripts run at
 * completion time for what only the machine or the built-in catalogs know
 * (GPU ids, query fields, doctor's ids, fit's models, the spec table's GPUs,
 * bench's tests, the queue's jobs), one candidate per line.
 *
 * bash and zsh get the table as rows "CONTEXT|WORD|KIND|FLAGS|CHOICES|TEXT"
 * and the same small walker over the command line in each shell's own
 * language; fish gets one `complete` line per command, option and operand.
 */
#include "cmd/cmd.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/collect.h"
#include "bench/suite.h"
#include "cmd/cli.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/specs.h"
#include "core/xalloc.h"
#include "doctor/doctor.h"
#include "fit/models.h"
#include "front/query.h"
#include "queue/proto.h"

/* how long __complete gpus and jobs may take before they give up, silently */
#define COMPLETE_TIMEOUT_S 3

/* the completion command itself, when the table does not list it yet */
static void
completion_usage(FILE *f)
{
	fputs("usage: gpuscope completion bash|zsh|fish\n"
	      "Print the completion script of that shell for gpuscope, made from its table of\n"
	      "commands and options: subcommands, options and their values (GPU ids and UUIDs\n"
	      "of this machine, query fields, doctor ids, fit's models, the spec table's GPUs).\n"
	      "  bash:  source <(gpuscope completion bash)\n"
	      "  zsh:   gpuscope completion zsh >\"${fpath[1]}/_gpuscope\"\n"
	      "  fish:  gpuscope completion fish >~/.config/fish/completions/gpuscope.fish\n",
	      f);
}

/* What a value of v completes to, as the scripts name it: "" for a flag. */
static const char *
value_kind(enum cli_value v)
{
	switch (v) {
	case CLI_NONE:
		return "";
	case CLI_FILE:
		return "file";
	case CLI_DIR:
		return "dir";
	case CLI_CHOICE:
		return "choice";
	case CLI_GPU:
		return "gpus";
	case CLI_FIELD_GPU:
		return "fields-gpu";
	case CLI_FIELD_APP:
		return "fields-apps";
	case CLI_DOCTOR_ID:
		return "doctor-ids";
	case CLI_MODEL:
		return "models";
	case CLI_SPEC_GPU:
		return "spec-gpus";
	case CLI_BENCH_TEST:
		return "bench-tests";
	case CLI_USER:
		return "user";
	case CLI_COMMAND:
		return "command";
	case CLI_JOB:
		return "jobs";
	case CLI_SUBCOMMAND:
		return "sub";
	case CLI_STRING:
	case CLI_NUMBER:
	case CLI_SECONDS:
	case CLI_SIZE:
	case CLI_TIME:
	case CLI_ADDR:
		break;
	}
	return "text";
}

/* the longest description a shell shows beside a candidate, in bytes */
#define DESC_MAX 90

/*
 * The first sentence of text into buf (of DESC_MAX + 1 bytes at least), for
 * a description: up to the first ". " (or the end), without its full stop,
 * on one line, with no character that would need quoting in a row ('|');
 * a longer one is cut at a blank, with "...".
 */
static const char *
first_sentence(const char *text, char *buf)
{
	const char *p = text ? text : "";
	size_t n = 0;

	for (; *p && n < DESC_MAX; p++) {
		if (*p == '.' && (p[1] == ' ' || p[1] == '\n' || !p[1]))
			break;
		buf[n++] = *p == '|' ? '/' : (*p == '\n' || *p == '\t') ? ' ' : *p;
	}
	if (n == DESC_MAX && *p && *p != '.') {
		while (n > DESC_MAX / 2 && buf[n - 1] != ' ')
			n--;
		while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == ',' || buf[n - 1] == ':'))
			n--;
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

/* The part of a command's name after its parent's ("submit" of "queue submit"), or NULL. */
static const char *
sub_name(const struct cli_command *c)
{
	const char *sp = strchr(c->name, ' ');

	return sp ? sp + 1 : NULL;
}

/* --- bash and zsh: the table as rows ---------------------------------------------------- */

/* Write s inside a single-quoted shell string. */
static void
put_quoted(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
}

static void
put_row(FILE *f, const char *ctx, const char *word, const char *kind, const char *flags,
        const char *choices, const char *text)
{
	char desc[DESC_MAX + 4];

	put_quoted(f, ctx);
	fputc('|', f);
	put_quoted(f, word);
	fprintf(f, "|%s|%s|", kind, flags);
	put_quoted(f, choices ? choices : "");
	fputc('|', f);
	put_quoted(f, first_sentence(text, desc));
	fputc('\n', f);
}

static void
put_option_rows(FILE *f, const char *ctx, const struct cli_option *o)
{
	for (; o && o->name; o++) {
		char flags[3], word[128];
		size_t n = 0;

		if (o->hidden)
			continue;
		if (o->list)
			flags[n++] = 'l';
		if (o->optional)
			flags[n++] = 'o';
		flags[n] = '\0';
		snprintf(word, sizeof(word), "--%s", o->name);
		put_row(f, ctx, word, value_kind(o->value), flags, o->choices, o->help);
		if (o->short_name) {
			snprintf(word, sizeof(word), "-%c", o->short_name);
			put_row(f, ctx, word, value_kind(o->value), flags, o->choices, o->help);
		}
	}
}

/*
 * The rows: a command ("" or its parent as CONTEXT, its name as WORD, KIND
 * cmd), each option of a command (WORD --name or -c; KIND what its value
 * is, "" for a flag; FLAGS l for a comma list, o for a value only after
 * '='), a command's operands (WORD #op), the global options (CONTEXT *).
 */
static void
put_table(FILE *f)
{
	for (unsigned i = 0; i < cli_command_count(); i++) {
		const struct cli_command *c = cli_command_at(i);
		const char *sub = sub_name(c);
		char parent[64];
		const char *kind = value_kind(c->operand);
		const char *choices = c->operand_choices;

		if (c->hidden)
			continue;
		snprintf(parent, sizeof(parent), "%.*s", sub ? (int)(sub - 1 - c->name) : 0,
		         c->name);
		put_row(f, parent, sub ? sub : c->name, "cmd", "", NULL, c->summary);
		put_option_rows(f, c->name, c->options);
		/* a subcommand operand without its list: the table's own subcommands */
		if (c->operand == CLI_SUBCOMMAND && !choices)
			kind = "";
		if (*kind)
			put_row(f, c->name, "#op", kind, "", choices, NULL);
	}
	put_option_rows(f, "*", cli_global_options);
}

static const char bash_script[] =
        "\n"
        "# _gpuscope_kind CONTEXT WORD: the row of WORD (an option or a command) in CONTEXT, or of\n"
        "# a global option, into _gk (the kind of its value), _gf (its flags), _gc (its choices)\n"
        "_gpuscope_kind() {\n"
        "\tlocal c w k f ch _\n"
        "\twhile IFS='|' read -r c w k f ch _; do\n"
        "\t\tif [[ $w == \"$2\" && ($c == \"$1\" || ($c == '*' && $w == -*)) ]]; then\n"
        "\t\t\t_gk=$k _gf=$f _gc=$ch\n"
        "\t\t\treturn 0\n"
        "\t\tfi\n"
        "\tdone <<<\"$_gpuscope_table\"\n"
        "\treturn 1\n"
        "}\n"
        "\n"
        "# _gpuscope_words CONTEXT KIND: the WORDs of CONTEXT's rows of that KIND (cmd, or - for options)\n"
        "_gpuscope_words() {\n"
        "\tlocal c w k f ch _\n"
        "\twhile IFS='|' read -r c w k f ch _; do\n"
        "\t\tif [[ $2 == cmd ]]; then\n"
        "\t\t\t[[ $c == \"$1\" && $k == cmd ]] && printf '%s\\n' \"$w\"\n"
        "\t\telif [[ ($c == \"$1\" || $c == '*') && $w == -* ]]; then\n"
        "\t\t\t# a long option that needs its value: offered with its '='\n"
        "\t\t\tif [[ $w == --* && -n $k && $f != *o* ]]; then\n"
        "\t\t\t\tprintf '%s=\\n' \"$w\"\n"
        "\t\t\telse\n"
        "\t\t\t\tprintf '%s\\n' \"$w\"\n"
        "\t\t\tfi\n"
        "\t\tfi\n"
        "\tdone <<<\"$_gpuscope_table\"\n"
        "}\n"
        "\n"
        "# _gpuscope_values KIND FLAGS CHOICES CUR [PREFIX]: add to COMPREPLY the values of that kind\n"
        "# CUR starts (a comma list item by item after its last comma), each after PREFIX\n"
        "_gpuscope_values() {\n"
        "\tlocal cur=$4 head=$5 item=$4 c\n"
        "\tlocal -a cands=()\n"
        "\tif [[ $2 == *l* && $cur == *,* ]]; then\n"
        "\t\thead=$5${cur%,*},\n"
        "\t\titem=${cur##*,}\n"
        "\tfi\n"
        "\tcase $1 in\n"
        "\tfile) mapfile -t cands < <(compgen -f -- \"$item\") ;;\n"
        "\tdir) mapfile -t cands < <(compgen -d -- \"$item\") ;;\n"
        "\tuser) mapfile -t cands < <(compgen -u -- \"$item\") ;;\n"
        "\tcommand) mapfile -t cands < <(compgen -c -- \"$item\") ;;\n"
        "\tchoice | sub) IFS=, read -ra cands <<<\"$3\" ;;\n"
        "\tgpus | fields-gpu | fields-apps | doctor-ids | models | spec-gpus | bench-tests | jobs)\n"
        "\t\tmapfile -t cands < <(\"$_gpuscope_prog\" ${_gpuscope_demo:+\"$_gpuscope_demo\"} __complete \"$1\" \\\n"
        "\t\t\t${_gpuscope_sock:+\"--socket=$_gpuscope_sock\"} 2>/dev/null) ;;\n"
        "\t*) return ;;\n"
        "\tesac\n"
        "\tcase $1 in file | dir) compopt -o filenames 2>/dev/null ;; esac\n"
        "\tfor c in \"${cands[@]}\"; do\n"
        "\t\t[[ $c == \"$item\"* ]] && COMPREPLY+=(\"$head$c\")\n"
        "\tdone\n"
        "}\n"
        "\n"
        "_gpuscope() {\n"
        "\tlocal line=${COMP_LINE:0:COMP_POINT} cur='' ctx='' w skip='' dashdash='' nops=0 i n c pre\n"
        "\tlocal _gk _gf _gc _gpuscope_prog _gpuscope_demo='' _gpuscope_sock=''\n"
        "\tlocal -a words\n"
        "\t# the words as typed, split on blanks only (COMP_WORDS splits --opt=VALUE and bus ids)\n"
        "\tread -ra words <<<\"$line\"\n"
        "\tif [[ $line != *[[:space:]] && ${#words[@]} -gt 1 ]]; then\n"
        "\t\tcur=${words[${#words[@]} - 1]}\n"
        "\t\tunset 'words[${#words[@]}-1]'\n"
        "\tfi\n"
        "\t_gpuscope_prog=${words[0]}\n"
        "\tCOMPREPLY=()\n"
        "\tn=${#words[@]}\n"
        "\tfor ((i = 1; i < n; i++)); do\n"
        "\t\tw=${words[i]}\n"
        "\t\t[[ $w == --demo ]] && _gpuscope_demo=--demo\n"
        "\t\t# the queue's socket, for its job ids\n"
        "\t\t[[ $w == --socket=* ]] && _gpuscope_sock=${w#*=}\n"
        "\t\t[[ ${words[i - 1]} == --socket ]] && _gpuscope_sock=$w\n"
        "\t\tif [[ -n $skip ]]; then\n"
        "\t\t\tskip=\n"
        "\t\telif [[ -n $dashdash ]]; then\n"
        "\t\t\tnops=$((nops + 1))\n"
        "\t\telif [[ $w == -- ]]; then\n"
        "\t\t\tdashdash=1\n"
        "\t\telif [[ $w == -?* ]]; then\n"
        "\t\t\t# an option without its value (-i, --id, not -i0 or --id=0): the next word is it\n"
        "\t\t\tif [[ $w != --*=* ]] && _gpuscope_kind \"$ctx\" \"$w\" && [[ -n $_gk && $_gf != *o* ]]; then\n"
        "\t\t\t\tskip=1\n"
        "\t\t\tfi\n"
        "\t\telif [[ -z $ctx ]] && _gpuscope_kind '' \"$w\" && [[ $_gk == cmd ]]; then\n"
        "\t\t\tctx=$w\n"
        "\t\telif [[ -n $ctx && $nops == 0 ]] && _gpuscope_kind \"$ctx\" \"$w\" && [[ $_gk == cmd ]]; then\n"
        "\t\t\tctx=\"$ctx $w\"\n"
        "\t\telse\n"
        "\t\t\tnops=$((nops + 1))\n"
        "\t\tfi\n"
        "\tdone\n"
        "\tif [[ -n $skip ]]; then\n"
        "\t\t_gpuscope_kind \"$ctx\" \"${words[n - 1]}\" && _gpuscope_values \"$_gk\" \"$_gf\" \"$_gc\" \"$cur\"\n"
        "\telif [[ -z $dashdash && $cur == --*=* ]]; then\n"
        "\t\t_gpuscope_kind \"$ctx\" \"${cur%%=*}\" &&\n"
        "\t\t\t_gpuscope_values \"$_gk\" \"$_gf\" \"$_gc\" \"${cur#*=}\" \"${cur%%=*}=\"\n"
        "\telif [[ -z $dashdash && $cur == -* ]]; then\n"
        "\t\twhile IFS= read -r w; do\n"
        "\t\t\t[[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\")\n"
        "\t\tdone < <(_gpuscope_words \"$ctx\" -)\n"
        "\telif [[ -n $dashdash ]]; then\n"
        "\t\t_gpuscope_kind \"$ctx\" '#op' && [[ $_gk == command ]] && _gpuscope_values command '' '' \"$cur\"\n"
        "\telse\n"
        "\t\tif [[ -z $ctx || $nops == 0 ]]; then\n"
        "\t\t\twhile IFS= read -r w; do\n"
        "\t\t\t\t[[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\")\n"
        "\t\t\tdone < <(_gpuscope_words \"$ctx\" cmd)\n"
        "\t\tfi\n"
        "\t\tif [[ -n $ctx ]] && _gpuscope_kind \"$ctx\" '#op'; then\n"
        "\t\t\t# FILE [top|watch|...]: the choices after the file\n"
        "\t\t\t[[ $_gk != choice && -n $_gc && $nops -gt 0 ]] && _gk=choice\n"
        "\t\t\t_gpuscope_values \"$_gk\" \"$_gf\" \"$_gc\" \"$cur\"\n"
        "\t\tfi\n"
        "\tfi\n"
        "\t# readline replaces the text after the last word-break character (= and : among them)\n"
        "\t# shellcheck disable=SC2295 # the characters as a set, not a string\n"
        "\tpre=${cur%\"${cur##*[${COMP_WORDBREAKS:-\" =:\"}]}\"}\n"
        "\tfor i in \"${!COMPREPLY[@]}\"; do\n"
        "\t\tc=${COMPREPLY[i]#\"$pre\"}\n"
        "\t\t[[ $c == *' '* ]] && printf -v c '%q' \"$c\"\n"
        "\t\tCOMPREPLY[i]=$c\n"
        "\tdone\n"
        "\tif [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *[=,] ]]; then\n"
        "\t\tcompopt -o nospace 2>/dev/null\n"
        "\tfi\n"
        "\treturn 0\n"
        "}\n"
        "complete -F _gpuscope gpuscope\n";

static const char zsh_script[] =
        "\n"
        "# the row of WORD (an option or a command) in CONTEXT, or of a global option: reply=(KIND FLAGS CHOICES)\n"
        "_gpuscope_kind() {\n"
        "\tlocal row\n"
        "\tlocal -a r\n"
        "\tfor row in ${(f)_gpuscope_table}; do\n"
        "\t\tr=(\"${(@s:|:)row}\")\n"
        "\t\tif [[ $r[2] == \"$2\" && ($r[1] == \"$1\" || ($r[1] == '*' && $r[2] == -*)) ]]; then\n"
        "\t\t\treply=(\"$r[3]\" \"$r[4]\" \"$r[5]\")\n"
        "\t\t\treturn 0\n"
        "\t\tfi\n"
        "\tdone\n"
        "\treturn 1\n"
        "}\n"
        "\n"
        "# complete the current word as a value of KIND (FLAGS l: a comma list, item by item)\n"
        "_gpuscope_values() {\n"
        "\tlocal -a c\n"
        "\t[[ $2 == *l* ]] && compset -P '*,'\n"
        "\tcase $1 in\n"
        "\tfile) _files ;;\n"
        "\tdir) _files -/ ;;\n"
        "\tuser) _users ;;\n"
        "\tcommand) _command_names -e ;;\n"
        "\tchoice | sub)\n"
        "\t\tc=(${(s:,:)3})\n"
        "\t\tcompadd -a c ;;\n"
        "\tgpus | fields-gpu | fields-apps | doctor-ids | models | spec-gpus | bench-tests | jobs)\n"
        "\t\tc=(${(f)\"$(_call_program $1 ${(q)_gpuscope_prog} $_gpuscope_demo __complete $1 ${_gpuscope_sock:+--socket=${(q)_gpuscope_sock}} 2>/dev/null)\"})\n"
        "\t\tcompadd -a c ;;\n"
        "\tesac\n"
        "}\n"
        "\n"
        "_gpuscope() {\n"
        "\tlocal ctx= w skip= dashdash= nops=0 i row\n"
        "\tlocal _gpuscope_prog=$words[1] _gpuscope_demo= _gpuscope_sock=\n"
        "\tlocal -a reply r cmds flags valued\n"
        "\tfor ((i = 2; i < CURRENT; i++)); do\n"
        "\t\tw=$words[i]\n"
        "\t\t[[ $w == --demo ]] && _gpuscope_demo=--demo\n"
        "\t\t[[ $w == --socket=* ]] && _gpuscope_sock=${w#*=}\n"
        "\t\t[[ $words[i-1] == --socket ]] && _gpuscope_sock=$w\n"
        "\t\tif [[ -n $skip ]]; then\n"
        "\t\t\tskip=\n"
        "\t\telif [[ -n $dashdash ]]; then\n"
        "\t\t\t(( nops++ ))\n"
        "\t\telif [[ $w == -- ]]; then\n"
        "\t\t\tdashdash=1\n"
        "\t\telif [[ $w == -?* ]]; then\n"
        "\t\t\tif [[ $w != --*=* ]] && _gpuscope_kind \"$ctx\" \"$w\" && [[ -n $reply[1] && $reply[2] != *o* ]]; then\n"
        "\t\t\t\tskip=1\n"
        "\t\t\tfi\n"
        "\t\telif [[ -z $ctx ]] && _gpuscope_kind '' \"$w\" && [[ $reply[1] == cmd ]]; then\n"
        "\t\t\tctx=$w\n"
        "\t\telif [[ -n $ctx && $nops == 0 ]] && _gpuscope_kind \"$ctx\" \"$w\" && [[ $reply[1] == cmd ]]; then\n"
        "\t\t\tctx=\"$ctx $w\"\n"
        "\t\telse\n"
        "\t\t\t(( nops++ ))\n"
        "\t\tfi\n"
        "\tdone\n"
        "\tif [[ -n $skip ]]; then\n"
        "\t\t_gpuscope_kind \"$ctx\" \"$words[CURRENT-1]\" && _gpuscope_values \"${reply[@]}\"\n"
        "\t\treturn\n"
        "\tfi\n"
        "\tif [[ -z $dashdash && $PREFIX == --*=* ]]; then\n"
        "\t\tif _gpuscope_kind \"$ctx\" \"${PREFIX%%=*}\"; then\n"
        "\t\t\tcompset -P '*='\n"
        "\t\t\t_gpuscope_values \"${reply[@]}\"\n"
        "\t\tfi\n"
        "\t\treturn\n"
        "\tfi\n"
        "\tif [[ -n $dashdash ]]; then\n"
        "\t\t_gpuscope_kind \"$ctx\" '#op' && [[ $reply[1] == command ]] && _command_names -e\n"
        "\t\treturn\n"
        "\tfi\n"
        "\tfor row in ${(f)_gpuscope_table}; do\n"
        "\t\tr=(\"${(@s:|:)row}\")\n"
        "\t\tif [[ $r[3] == cmd ]]; then\n"
        "\t\t\t[[ $r[1] == \"$ctx\" ]] && cmds+=(\"${r[2]//:/\\\\:}:${(j:|:)r[6,-1]}\")\n"
        "\t\telif [[ ($r[1] == \"$ctx\" || $r[1] == '*') && $r[2] == -* ]]; then\n"
        "\t\t\tif [[ $r[2] == --* && -n $r[3] && $r[4] != *o* ]]; then\n"
        "\t\t\t\tvalued+=(\"$r[2]=:${(j:|:)r[6,-1]}\")\n"
        "\t\t\telse\n"
        "\t\t\t\tflags+=(\"$r[2]:${(j:|:)r[6,-1]}\")\n"
        "\t\t\tfi\n"
        "\t\tfi\n"
        "\tdone\n"
        "\tif [[ $PREFIX == -* ]]; then\n"
        "\t\t_describe -t options option flags -- valued -S ''\n"
        "\t\treturn\n"
        "\tfi\n"
        "\tif [[ -z $ctx || $nops == 0 ]] && (( $#cmds )); then\n"
        "\t\t_describe -t commands command cmds\n"
        "\tfi\n"
        "\tif [[ -n $ctx ]] && _gpuscope_kind \"$ctx\" '#op'; then\n"
        "\t\t# FILE [top|watch|...]: the choices after the file\n"
        "\t\t[[ $reply[1] != choice && -n $reply[3] && $nops -gt 0 ]] && reply[1]=choice\n"
        "\t\t_gpuscope_values \"${reply[@]}\"\n"
        "\tfi\n"
        "\treturn 0\n"
        "}\n"
        "\n"
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
        "\t_gpuscope \"$@\"\n"
        "else\n"
        "\tcompdef _gpuscope gpuscope\n"
        "fi\n";

static int
print_bash(void)
{
	fputs("# bash completion for gpuscope, made by 'gpuscope completion bash' from its table of\n"
	      "# commands and options: source <(gpuscope completion bash)\n"
	      "\n"
	      "# CONTEXT|WORD|KIND|FLAGS|CHOICES|DESCRIPTION\n"
	      "_gpuscope_table='",
	      stdout);
	put_table(stdout);
	fputs("'\n", stdout);
	fputs(bash_script, stdout);
	return EXIT_OK;
}

static int
print_zsh(void)
{
	fputs("#compdef gpuscope\n"
	      "# zsh completion for gpuscope, made by 'gpuscope completion zsh' from its table of\n"
	      "# commands and options: a file _gpuscope in $fpath, or source <(gpuscope completion zsh)\n"
	      "\n"
	      "# CONTEXT|WORD|KIND|FLAGS|CHOICES|DESCRIPTION\n"
	      "_gpuscope_table='",
	      stdout);
	put_table(stdout);
	fputs("'\n", stdout);
	fputs(zsh_script, stdout);
	return EXIT_OK;
}

/* --- fish: one complete line each ------------------------------------------------------- */

/* Write s as one single-quoted fish string. */
static void
fish_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* What a value of kind completes to in fish: the arguments of complete. */
static void
fish_values(FILE *f, enum cli_value v, bool list, const char *choices)
{
	const char *kind = value_kind(v);
	char buf[1024];

	if (v == CLI_FILE) {
		fputs(" -F", f);
		return;
	}
	fputs(" -f", f);
	if (v == CLI_DIR) {
		fputs(" -a '(__fish_complete_directories)'", f);
	} else if (v == CLI_USER) {
		fputs(" -a '(__fish_complete_users)'", f);
	} else if (v == CLI_COMMAND) {
		fputs(" -a '(__fish_complete_command)'", f);
	} else if (v == CLI_CHOICE || v == CLI_SUBCOMMAND) {
		if (!choices)
			return;
		if (list) {
			snprintf(buf, sizeof(buf), "(__gpuscope_list =%s)", choices);
		} else {
			snprintf(buf, sizeof(buf), "%s", choices);
			for (char *p = buf; *p; p++)
				if (*p == ',')
					*p = ' ';
		}
		fputs(" -a ", f);
		fish_quoted(f, buf);
	} else if (strcmp(kind, "text")) {
		fprintf(f, " -a '(__gpuscope_%s %s)'", list ? "list" : "dyn", kind);
	}
}

/* The condition that the command line is in command c. */
static void
fish_condition(FILE *f, const struct cli_command *c)
{
	const char *sub = sub_name(c);
	char buf[256];

	if (sub)
		snprintf(buf, sizeof(buf),
		         "__fish_seen_subcommand_from %.*s; and __fish_seen_subcommand_from %s",
		         (int)(sub - 1 - c->name), c->name, sub);
	else
		snprintf(buf, sizeof(buf), "__fish_seen_subcommand_from %s", c->name);
	fputs(" -n ", f);
	fish_quoted(f, buf);
}

static void
fish_options(FILE *f, const struct cli_command *c, const struct cli_option *o)
{
	char desc[DESC_MAX + 4];

	for (; o && o->name; o++) {
		if (o->hidden)
			continue;
		fputs("complete -c gpuscope", f);
		if (c)
			fish_condition(f, c);
		fprintf(f, " -l %s", o->name);
		if (o->short_name)
			fprintf(f, " -s %c", o->short_name);
		if (o->value != CLI_NONE) {
			if (!o->optional)
				fputs(" -r", f);
			fish_values(f, o->value, o->list, o->choices);
		}
		fputs(" -d ", f);
		fish_quoted(f, first_sentence(o->help, desc));
		fputc('\n', f);
	}
}

/* The subcommands of parent, space-separated, into buf. */
static void
fish_subcommands(const char *parent, char *buf, size_t size)
{
	size_t len = strlen(parent), n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < cli_command_count(); i++) {
		const struct cli_command *c = cli_command_at(i);

		if (!c->hidden && !strncmp(c->name, parent, len) && c->name[len] == ' ' && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? " " : "",
			                      c->name + len + 1);
	}
}

static const char fish_functions[] =
        "# candidates of KIND from gpuscope __complete (with --demo and --socket when the line has them)\n"
        "function __gpuscope_dyn\n"
        "    set -l tok (commandline -opc)\n"
        "    set -l demo\n"
        "    set -l sock\n"
        "    contains -- --demo $tok; and set demo --demo\n"
        "    for i in (seq 2 (count $tok))\n"
        "        if string match -q -- '--socket=*' $tok[$i]\n"
        "            set sock $tok[$i]\n"
        "        else if test \"x$tok[$i]\" = x--socket -a $i -lt (count $tok)\n"
        "            set sock --socket=$tok[(math $i + 1)]\n"
        "        end\n"
        "    end\n"
        "    command $tok[1] $demo __complete $argv[1] $sock 2>/dev/null\n"
        "end\n"
        "\n"
        "# a comma list, item by item after the last comma: KIND of __complete, or =CHOICES\n"
        "function __gpuscope_list\n"
        "    set -l cur (string replace -r -- '^--?[^=]*=' '' (commandline -ct))\n"
        "    set -l head (string match -r -- '^.*,' $cur)\n"
        "    set -l items\n"
        "    if string match -q -- '=*' $argv[1]\n"
        "        set items (string split , -- (string sub -s 2 -- $argv[1]))\n"
        "    else\n"
        "        set items (__gpuscope_dyn $argv[1])\n"
        "    end\n"
        "    for i in $items\n"
        "        printf '%s%s\\n' \"$head\" $i\n"
        "    end\n"
        "end\n"
        "\n";

static int
print_fish(void)
{
	char desc[DESC_MAX + 4], subs[1024];

	fputs("# fish completion for gpuscope, made by 'gpuscope completion fish' from its table of\n"
	      "# commands and options: gpuscope completion fish | source\n"
	      "\n",
	      stdout);
	fputs(fish_functions, stdout);
	fputs("complete -c gpuscope -f\n", stdout);
	for (unsigned i = 0; i < cli_command_count(); i++) {
		const struct cli_command *c = cli_command_at(i);
		const char *sub = sub_name(c);
		char cond[1200];

		if (c->hidden)
			continue;
		if (sub) {
			char parent[64];

			snprintf(parent, sizeof(parent), "%.*s", (int)(sub - 1 - c->name), c->name);
			fish_subcommands(parent, subs, sizeof(subs));
			snprintf(
			        cond, sizeof(cond),
			        "__fish_seen_subcommand_from %s; and not __fish_seen_subcommand_from %s",
			        parent, subs);
		} else {
			snprintf(cond, sizeof(cond), "__fish_use_subcommand");
		}
		fputs("complete -c gpuscope -n ", stdout);
		fish_quoted(stdout, cond);
		fputs(" -a ", stdout);
		fish_quoted(stdout, sub ? sub : c->name);
		fputs(" -d ", stdout);
		fish_quoted(stdout, first_sentence(c->summary, desc));
		fputc('\n', stdout);
		fish_options(stdout, c, c->options);
		if (c->operand != CLI_NONE && strcmp(value_kind(c->operand), "text") &&
		    !(c->operand == CLI_SUBCOMMAND && !c->operand_choices)) {
			fputs("complete -c gpuscope", stdout);
			fish_condition(stdout, c);
			fish_values(stdout, c->operand, false, c->operand_choices);
			fputc('\n', stdout);
		}
		/* FILE [top|watch|...]: the choices too */
		if (c->operand != CLI_CHOICE && c->operand != CLI_SUBCOMMAND &&
		    c->operand_choices) {
			fputs("complete -c gpuscope", stdout);
			fish_condition(stdout, c);
			fish_values(stdout, CLI_CHOICE, false, c->operand_choices);
			fputc('\n', stdout);
		}
	}
	fish_options(stdout, NULL, cli_global_options);
	return EXIT_OK;
}

int
cmd_completion(int argc, char **argv, struct gs_config *cfg)
{
	(void)cfg;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		completion_usage(stdout);
		return EXIT_OK;
	}
	if (argc != 2) {
		cmd_error("completion takes one shell: bash, zsh or fish");
		completion_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "bash"))
		return print_bash();
	if (!strcmp(argv[1], "zsh"))
		return print_zsh();
	if (!strcmp(argv[1], "fish"))
		return print_fish();
	cmd_error("completion: '%s' is not a shell gpuscope completes: give bash, zsh or fish",
	          argv[1]);
	return EXIT_USAGE;
}

/* --- __complete KIND -------------------------------------------------------------------- */

/* A GPU that does not answer in time: the shell waits no longer, and sees nothing. */
static void
complete_timeout(int sig)
{
	(void)sig;
	_exit(EXIT_OK);
}

/* This machine's GPUs: index, UUID and bus id of each, UUID of each MIG device. */
static int
complete_gpus(struct gs_config *cfg)
{
	struct sigaction sa;
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	struct gpu_snapshot snap;
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* a completion prints candidates or nothing: no warning of a backend may reach the terminal
	 */
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = complete_timeout;
	sigaction(SIGALRM, &sa, NULL);
	alarm(COMPLETE_TIMEOUT_S);
	cfg->timeout = 1;
	if (collector_open(cfg, &c, &err) < 0)
		return EXIT_OK;
	collector_scan(c, &err);
	gpu_snapshot_init(&snap);
	if (collector_count(c) && collector_sample(c, &snap, 0, &err) == 0) {
		for (size_t i = 0; i < snap.nr_dev; i++) {
			const struct gpu_device *d = &snap.dev[i];

			if (!d->is_mig)
				printf("%u\n", d->index);
			if (d->uuid[0])
				printf("%s\n", d->uuid);
			if (!d->is_mig && d->pci_bus_id[0])
				printf("%s\n", d->pci_bus_id);
		}
	}
	fflush(stdout);
	gpu_snapshot_release(&snap);
	collector_close(c);
	alarm(0);
	return EXIT_OK;
}

/* The queue's jobs, as queue ls lists them; nothing when the daemon does not answer. */
static int
complete_jobs(const char *socket)
{
	struct err err = ERR_INIT;
	json_t *req, *resp = NULL, *jobs;
	int fd;

	if (qproto_connect(qproto_socket_path(socket), &fd, &err) < 0)
		return EXIT_OK;
	req = json_pack("{s:s,s:b}", "op", "ls", "all", 1);
	if (req && qproto_send(fd, req, &err) == 0 &&
	    qproto_recv(fd, &resp, COMPLETE_TIMEOUT_S * 1000, &err) == 0 &&
	    json_is_true(json_object_get(resp, "ok"))) {
		jobs = json_object_get(resp, "jobs");
		for (size_t i = 0; i < json_array_size(jobs); i++) {
			json_t *id = json_object_get(json_array_get(jobs, i), "id");

			if (json_is_integer(id))
				printf("%lld\n", (long long)json_integer_value(id));
		}
	}
	json_decref(req);
	json_decref(resp);
	close(fd);
	return EXIT_OK;
}

int
cmd_complete(int argc, char **argv, struct gs_config *cfg)
{
	const char *kind = argc >= 2 ? argv[1] : "", *socket = NULL;

	/* the queue's socket of the command line (queue --socket PATH), for jobs */
	if (argc == 3 && !strncmp(argv[2], "--socket=", 9))
		socket = argv[2] + 9;
	else if (argc != 2)
		kind = "";
	if (!strcmp(kind, "gpus"))
		return complete_gpus(cfg);
	if (!strcmp(kind, "jobs"))
		return complete_jobs(socket);
	if (!strcmp(kind, "fields-gpu") || !strcmp(kind, "fields-apps")) {
		enum query_kind q = kind[7] == 'g' ? QUERY_GPU : QUERY_APPS;

		for (unsigned i = 0; i < query_field_count(q); i++)
			printf("%s\n", query_field_name(q, i));
	} else if (!strcmp(kind, "doctor-ids")) {
		size_t n = dr_catalog_list(NULL, 0);
		const struct dr_explain **e = xcalloc(n ? n : 1, sizeof(*e));

		dr_catalog_list(e, n);
		for (size_t i = 0; i < n; i++)
			printf("%s\n", e[i]->id);
		free(e);
	} else if (!strcmp(kind, "models")) {
		const struct model_cfg *m;
		size_t n = model_catalog(&m);

		for (size_t i = 0; i < n; i++)
			printf("%s\n", m[i].name);
	} else if (!strcmp(kind, "spec-gpus")) {
		const struct gpu_spec *g;
		size_t n = gpu_specs(&g);

		for (size_t i = 0; i < n; i++)
			printf("%s\n", g[i].name);
	} else if (!strcmp(kind, "bench-tests")) {
		for (size_t i = 0; bench_suite_test_name(i); i++)
			printf("%s\n", bench_suite_test_name(i));
	} else {
		cmd_error(
		        "__complete takes one of gpus, fields-gpu, fields-apps, doctor-ids, models, "
		        "spec-gpus, bench-tests, jobs");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
