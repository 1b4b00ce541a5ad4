/*
 * workload.*: what the GPUs' work looks like over a window of samples
 * (doctor --watch SEC, or a stretch of a recording): a GPU starved by its
 * input pipeline (utilisation swinging between idle and full), a GPU
 * "100 % busy" at low power and clocks (one small kernel at a time), a
 * process holding memory while it computes nothing, memory growing towards
 * full, a process that may be a cryptominer, and a GPU used by the desktop
 * only. Without a window (one sample) there is nothing to say.
 *
 * One pass over the samples fills, for each GPU of the newest sample, its
 * series (utilisation, power, clocks, memory), and for each process (the
 * same pid and start time on the same GPU) its running totals; the
 * findings are read from those, so the check is O(samples x processes).
 */
#include "doctor/doctor.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "core/fmt.h"

/* --- thresholds ---------------------------------------------------------------------- */

#define MIN_SAMPLES 6 /* fewer: too few to judge a pattern */

/* starved: bimodal utilisation */
#define STARVE_LOW          10.0  /* percent: the GPU waits */
#define STARVE_HIGH         90.0  /* percent: the GPU computes */
#define STARVE_MIN_SAMPLES  10    /* with utilisation read */
#define STARVE_EXTREME      0.80  /* share of samples in either mode */
#define STARVE_MAX_DUTY     0.75  /* busy share from this on: healthy with dips */
#define STARVE_MIN_DUTY     0.05  /* below: idle with rare bursts, not a loop */
#define STARVE_MIN_SWITCHES 4     /* transitions between the modes */
#define CPU_ONE_CORE_LOW    70.0  /* PF_CPU_PERCENT of "about one core" */
#define CPU_ONE_CORE_HIGH   140.0 /* above: several cores */
#define CPU_IDLE            25.0  /* below: the process does not compute on the CPU */

/* busy at low power */
#define BUSY_UTIL      90.0 /* percent */
#define LOW_POWER      0.40 /* of the power limit */
#define LOW_CLOCK      0.60 /* of the maximum SM clock */
#define LOW_SM         30.0 /* percent: processes' SM use, summed */
#define HIGH_SM        60.0 /* percent: truly busy */
#define BUSY_LOW_SHARE 0.60 /* of the samples with utilisation read */

/* idle holder */
#define IDLE_MIN_SECONDS 600.0
#define IDLE_MIN_BYTES   (1024.0 * 1024 * 1024)
#define IDLE_MIN_SHARE   0.10 /* of the GPU's memory */
#define IDLE_MIN_SAMPLES 3

/* memory growth */
#define GROW_FULL      0.90  /* used share of the GPU's memory, newest sample */
#define GROW_MONOTONIC 0.75  /* rising steps among the steps that change */
#define GROW_MIN_SHARE 0.005 /* fitted growth over the window, of total */
#define GROW_MIN_UPS   3     /* rising steps */

/* suspect process */
#define HEAVY_SM        50.0 /* percent: heavy use */
#define ODD_HOUR_END    5    /* 00:00 to 05:00 local time */
#define ODD_MIN_SAMPLES 3

/* --- names --------------------------------------------------------------------------- */

static const char *const miner_names[] = {
	"xmrig",         "xmr-stak",    "t-rex",          "nbminer",   "lolminer",
	"phoenixminer",  "gminer",      "ethminer",       "nanominer", "teamredminer",
	"bzminer",       "srbminer",    "srbminer-multi", "trex",      "miniz",
	"excavator",     "ccminer",     "cgminer",        "bminer",    "claymore",
	"ethdcrminer64", "kawpowminer", "onezerominer",   "rigel",     "wildrig",
	"z-enemy",       NULL
};

/* clang-format off */
static const char *const compositor_names[] = {
	"Xorg", "X", "Xwayland", "gnome-shell", "kwin_x11",
	"kwin_wayland", "kwin", "sway", "mutter", "plasmashell",
	"weston", "Hyprland", "xfwm4", "picom", "compiz",
	"cinnamon", "muffin", "budgie-wm", "gnome-remote-desktop-daemon", "cosmic-comp",
	"labwc", "wayfire", "niri",
	NULL,
};
/* clang-format on */

/* inference servers idle by design between requests (matched in the command line) */
/* clang-format off */
static const char *const server_names[] = {
	"tritonserver", "vllm", "text-generation-launcher", "text-generation-server",
	"ollama", "tensorflow_model_server", "torchserve", "llama-server",
	"sglang", "lmdeploy", "trtllm-serve", "lorax",
	"infinity_emb",
	NULL,
};
/* clang-format on */

/* The last component of the first word of s ("/usr/lib/xorg/Xorg -nolisten" -> "Xorg"). */
static void
base_word(char *buf, size_t size, const char *s)
{
	size_t len = strcspn(s, " \t");
	const char *b = s;

	for (size_t i = 0; i < len; i++)
		if (s[i] == '/')
			b = s + i + 1;
	len -= (size_t)(b - s);
	if (len >= size)
		len = size - 1;
	memcpy(buf, b, len);
	buf[len] = '\0';
}

static bool
in_list(const char *const *list, const char *s, bool icase)
{
	for (size_t i = 0; list[i]; i++)
		if (icase ? !strcasecmp(list[i], s) : !strcmp(list[i], s))
			return true;
	return false;
}

/* Does the process's name or program (first word of its command) match list? */
static bool
named(const struct gpu_proc *p, const char *const *list, bool icase)
{
	char b[256];

	if (p->name && *p->name) {
		base_word(b, sizeof(b), p->name);
		if (in_list(list, b, icase))
			return true;
	}
	if (p->cmdline && *p->cmdline) {
		base_word(b, sizeof(b), p->cmdline);
		if (in_list(list, b, icase))
			return true;
	}
	return false;
}

static bool
is_server(const struct gpu_proc *p)
{
	if (named(p, server_names, true))
		return true;
	for (size_t i = 0; p->cmdline && server_names[i]; i++)
		if (strstr(p->cmdline, server_names[i]))
			return true;
	return false;
}

static bool
is_notebook(const struct gpu_proc *p)
{
	return p->cmdline && (strstr(p->cmdline, "ipykernel") || strstr(p->cmdline, "jupyter") ||
	                      strstr(p->cmdline, "colab_kernel"));
}

static bool
under_tmp(const char *s)
{
	return s && (!strncmp(s, "/tmp/", 5) || !strncmp(s, "/var/tmp/", 9) ||
	             !strncmp(s, "/dev/shm/", 9) || !strncmp(s, "/run/user/", 10));
}

/* Kernel threads never use a GPU: a name such as "[kworker/0:1]" or "kthreadd" is a disguise. */
static bool
kernel_thread_name(const char *s)
{
	static const char *const kt[] = { "kworker",   "kthreadd",  "ksoftirqd", "kswapd",
		                          "migration", "rcu_sched", "watchdog",  NULL };

	if (!s || !*s)
		return false;
	if (s[0] == '[' && s[strlen(s) - 1] == ']')
		return true;
	for (size_t i = 0; kt[i]; i++)
		if (!strncmp(s, kt[i], strlen(kt[i])))
			return true;
	return false;
}

/* --- the window, digested ------------------------------------------------------------ */

/* A GPU of the newest sample and its series over the window (NAN: not read). */
struct slot {
	const struct gpu_device *dev; /* in the newest sample */
	double *util, *power, *limit, *clk, *clkmax, *used, *total, *sm, *t;
	size_t owner; /* track index of its main process, or SIZE_MAX */
};

/* A process on one GPU across the samples. */
struct track {
	const struct gpu_proc *p; /* its newest sample */
	size_t slot;
	uint32_t pid;
	uint64_t start_ticks;
	double start_time;  /* PF_START_TIME, or NAN */
	double first, last; /* sample times it was seen at */
	size_t seen;
	/* memory: regression on (time - t0, bytes) */
	double st, sm, stt, stm, mem_first, mem_last, mem_max;
	size_t nm;
	/* SM use */
	double sm_sum;
	size_t sm_n, heavy;
	/* idle run up to now: since when, its least memory; NAN when not idle */
	double idle_since, idle_min_mem;
	size_t idle_samples;
	bool idle_now;
	/* CPU while its GPU waits and while it computes (starved) */
	double cpu_low, cpu_high;
	size_t cpu_low_n, cpu_high_n;
	/* heavy use at odd hours */
	size_t odd_heavy;
	long next; /* hash chain, -1 at the end */
};

struct digest {
	const struct dr_window *w;
	double t0, span;
	struct slot *slot;
	size_t nr_slot;
	struct track *track;
	size_t nr_track;
	long *bucket;
	size_t nr_bucket;
	double *store;
};

static bool
same_gpu(const struct gpu_device *a, const struct gpu_device *b)
{
	if (a->vendor != b->vendor || a->index != b->index)
		return false;
	return !*a->uuid || !*b->uuid || !strcmp(a->uuid, b->uuid);
}

/* The slot of device i of sample s, or SIZE_MAX when it is not in the newest sample. */
static size_t
slot_of(const struct digest *g, const struct gpu_snapshot *s, size_t i)
{
	if (i < g->nr_slot && same_gpu(g->slot[i].dev, &s->dev[i]))
		return i;
	for (size_t k = 0; k < g->nr_slot; k++)
		if (same_gpu(g->slot[k].dev, &s->dev[i]))
			return k;
	return SIZE_MAX;
}

static bool
same_start(const struct track *t, const struct gpu_proc *p)
{
	if (t->start_ticks && p->start_ticks)
		return t->start_ticks == p->start_ticks;
	if (!isnan(t->start_time) && proc_has(p, PF_START_TIME))
		return fabs(t->start_time - p->v[PF_START_TIME]) <= 2.0;
	return true;
}

static struct track *
track_of(struct digest *g, size_t slot, const struct gpu_proc *p)
{
	size_t h = ((size_t)p->pid * 2654435761u + slot * 40503u) & (g->nr_bucket - 1);
	struct track *t;

	for (long i = g->bucket[h]; i >= 0; i = g->track[i].next) {
		t = &g->track[i];
		if (t->slot == slot && t->pid == p->pid && same_start(t, p))
			return t;
	}
	t = &g->track[g->nr_track];
	memset(t, 0, sizeof(*t));
	t->slot = slot;
	t->pid = p->pid;
	t->start_ticks = p->start_ticks;
	t->start_time = proc_has(p, PF_START_TIME) ? p->v[PF_START_TIME] : NAN;
	t->idle_since = NAN;
	t->idle_min_mem = NAN;
	t->mem_first = NAN;
	t->next = g->bucket[h];
	g->bucket[h] = (long)g->nr_track;
	g->nr_track++;
	return t;
}

static double
val(const struct gpu_device *d, enum gpu_field f)
{
	return dev_has(d, f) ? d->v[f] : NAN;
}

static bool
odd_hour(double time)
{
	time_t tt = (time_t)time;
	struct tm tm;

	if (!localtime_r(&tt, &tm))
		return false;
	return tm.tm_hour < ODD_HOUR_END;
}

static void
add_proc_sample(struct digest *g, size_t k, size_t slot, const struct gpu_proc *p)
{
	struct slot *sl = &g->slot[slot];
	struct track *t = track_of(g, slot, p);
	double now = sl->t[k], util = sl->util[k];
	bool idle, sm_known = proc_has(p, PF_SM_UTIL);
	double smv = sm_known ? p->v[PF_SM_UTIL] : NAN;

	t->p = p;
	if (!t->seen)
		t->first = now;
	t->last = now;
	t->seen++;
	if (proc_has(p, PF_GPU_MEM)) {
		double m = p->v[PF_GPU_MEM], x = now - g->t0;

		if (!t->nm)
			t->mem_first = m;
		t->st += x;
		t->sm += m;
		t->stt += x * x;
		t->stm += x * m;
		t->nm++;
		t->mem_last = m;
		if (m > t->mem_max)
			t->mem_max = m;
	}
	if (sm_known) {
		t->sm_sum += smv;
		t->sm_n++;
		if (isnan(sl->sm[k]))
			sl->sm[k] = 0;
		sl->sm[k] += smv;
	}
	/* heavy: its own SM use, or a busy GPU it has to itself */
	if (sm_known ? smv >= HEAVY_SM : util >= HEAVY_SM) {
		t->heavy++;
		if (odd_hour(now))
			t->odd_heavy++;
	}
	/* idle: no SM use; without per-process figures, an idle GPU */
	idle = sm_known ? smv <= 0 : util <= 0;
	if (idle && proc_has(p, PF_GPU_MEM)) {
		if (!t->idle_now) {
			t->idle_since = now;
			t->idle_min_mem = p->v[PF_GPU_MEM];
			t->idle_samples = 0;
		}
		t->idle_now = true;
		t->idle_samples++;
		if (p->v[PF_GPU_MEM] < t->idle_min_mem)
			t->idle_min_mem = p->v[PF_GPU_MEM];
	} else {
		t->idle_now = false;
		t->idle_since = NAN;
	}
	if (proc_has(p, PF_CPU_PERCENT) && !isnan(util)) {
		if (util < STARVE_LOW) {
			t->cpu_low += p->v[PF_CPU_PERCENT];
			t->cpu_low_n++;
		} else if (util > STARVE_HIGH) {
			t->cpu_high += p->v[PF_CPU_PERCENT];
			t->cpu_high_n++;
		}
	}
}

static void
digest_init(struct digest *g, const struct dr_window *w)
{
	const struct gpu_snapshot *last = &w->s[w->nr - 1];
	size_t total = 0, per;
	double *st;

	memset(g, 0, sizeof(*g));
	g->w = w;
	g->t0 = w->s[0].time;
	g->span = last->time - w->s[0].time;
	g->nr_slot = last->nr_dev;
	g->slot = xcalloc(g->nr_slot ? g->nr_slot : 1, sizeof(*g->slot));
	per = w->nr;
	st = g->store =
	        xcalloc(st_mult(st_mult(g->nr_slot ? g->nr_slot : 1, per), 9), sizeof(double));
	for (size_t i = 0; i < g->nr_slot * per * 9; i++)
		st[i] = NAN;
	for (size_t i = 0; i < g->nr_slot; i++) {
		struct slot *sl = &g->slot[i];

		sl->dev = &last->dev[i];
		sl->owner = SIZE_MAX;
		sl->util = st, st += per;
		sl->power = st, st += per;
		sl->limit = st, st += per;
		sl->clk = st, st += per;
		sl->clkmax = st, st += per;
		sl->used = st, st += per;
		sl->total = st, st += per;
		sl->sm = st, st += per;
		sl->t = st, st += per;
	}
	for (size_t k = 0; k < w->nr; k++)
		total += w->s[k].nr_proc;
	g->track = xcalloc(total ? total : 1, sizeof(*g->track));
	for (g->nr_bucket = 16; g->nr_bucket < 2 * total; g->nr_bucket *= 2)
		;
	g->bucket = xmalloc(st_mult(g->nr_bucket, sizeof(*g->bucket)));
	for (size_t i = 0; i < g->nr_bucket; i++)
		g->bucket[i] = -1;
}

static void
digest_fill(struct digest *g)
{
	const struct dr_window *w = g->w;
	size_t *map = NULL, alloc_map = 0;

	for (size_t k = 0; k < w->nr; k++) {
		const struct gpu_snapshot *s = &w->s[k];

		ALLOC_GROW(map, s->nr_dev + 1, alloc_map);
		for (size_t i = 0; i < s->nr_dev; i++) {
			const struct gpu_device *d = &s->dev[i];
			size_t j = map[i] = slot_of(g, s, i);
			struct slot *sl;

			if (j == SIZE_MAX)
				continue;
			sl = &g->slot[j];
			sl->t[k] = s->time;
			if (d->state != DEV_OK)
				continue;
			sl->util[k] = val(d, GF_UTIL_GPU);
			sl->power[k] = val(d, GF_POWER_DRAW);
			sl->limit[k] = val(d, GF_POWER_LIMIT);
			sl->clk[k] = val(d, GF_CLOCK_SM);
			sl->clkmax[k] = val(d, GF_CLOCK_MAX_SM);
			sl->used[k] = val(d, GF_MEM_USED);
			sl->total[k] = val(d, GF_MEM_TOTAL);
		}
		for (size_t i = 0; i < s->nr_proc; i++) {
			const struct gpu_proc *p = &s->proc[i];

			if (p->dev >= s->nr_dev || map[p->dev] == SIZE_MAX)
				continue;
			add_proc_sample(g, k, map[p->dev], p);
		}
	}
	free(map);
	/* each GPU's main process: seen longest, then most memory */
	for (size_t i = 0; i < g->nr_track; i++) {
		struct slot *sl = &g->slot[g->track[i].slot];
		const struct track *o = sl->owner == SIZE_MAX ? NULL : &g->track[sl->owner];
		const struct track *t = &g->track[i];

		if (!o || t->seen > o->seen || (t->seen == o->seen && t->mem_max > o->mem_max))
			sl->owner = i;
	}
}

static void
digest_release(struct digest *g)
{
	free(g->slot);
	free(g->track);
	free(g->bucket);
	free(g->store);
}

/* --- wording ------------------------------------------------------------------------- */

/* "GPU 0 (NVIDIA H100 80GB HBM3)" */
static void
gpu_label(char *buf, size_t size, const struct gpu_device *d)
{
	if (*d->name)
		snprintf(buf, size, "GPU %u (%s)", d->index, d->name);
	else
		snprintf(buf, size, "GPU %u", d->index);
}

/* "pid 4242 (python, user alice, container 3f2a1b9c0d4e)" */
static void
proc_label(struct strbuf *sb, const struct gpu_proc *p)
{
	strbuf_addf(sb, "pid %u (%s", (unsigned)p->pid, p->name && *p->name ? p->name : "?");
	if (p->user)
		strbuf_addf(sb, ", user %s", p->user);
	if (p->container)
		strbuf_addf(sb, ", %s container %s",
		            p->container_runtime ? p->container_runtime : "a", p->container);
	strbuf_addch(sb, ')');
}

static void
evidence_command(struct dr_finding *f, const struct gpu_proc *p)
{
	if (p->cmdline && *p->cmdline)
		dr_evidence(f, "command: %.300s", p->cmdline);
}

static void
local_time(char *buf, size_t size, double time)
{
	time_t tt = (time_t)time;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "%.0f", time);
}

static double
mean_of(const double *v, size_t n, size_t *count)
{
	double sum = 0;
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i])) {
			sum += v[i];
			c++;
		}
	if (count)
		*count = c;
	return c ? sum / (double)c : NAN;
}

/* --- workload.starved ---------------------------------------------------------------- */

static void
check_starved(const struct digest *g, size_t j, struct dr_report *r)
{
	const struct slot *sl = &g->slot[j];
	size_t n = g->w->nr, nv = 0, lo = 0, hi = 0, switches = 0, rises = 0;
	double cl = NAN, first_rise = NAN, last_rise = NAN, period, duty, mean;
	int state = 0; /* -1 waiting, 1 computing, 0 not yet known */
	const struct track *o;
	struct dr_finding *f;
	struct strbuf sb = STRBUF_INIT;
	char gpu[160], per[32], span[32];

	for (size_t k = 0; k < n; k++) {
		double u = sl->util[k];
		int now;

		if (isnan(u))
			continue;
		nv++;
		if (u < STARVE_LOW) {
			lo++;
			now = -1;
		} else if (u > STARVE_HIGH) {
			hi++;
			now = 1;
		} else {
			continue; /* between the modes: keeps the state */
		}
		if (state && now != state) {
			switches++;
			if (now == 1) {
				if (!rises++)
					first_rise = sl->t[k];
				last_rise = sl->t[k];
			}
		}
		state = now;
	}
	if (nv < STARVE_MIN_SAMPLES || lo + hi < STARVE_EXTREME * (double)nv ||
	    switches < STARVE_MIN_SWITCHES)
		return;
	duty = (double)hi / (double)(lo + hi);
	if (duty >= STARVE_MAX_DUTY || duty < STARVE_MIN_DUTY)
		return;
	if (rises >= 2)
		period = (last_rise - first_rise) / (double)(rises - 1);
	else
		period = 2 * g->span / (double)switches;
	mean = mean_of(sl->util, n, NULL);
	o = sl->owner == SIZE_MAX ? NULL : &g->track[sl->owner];

	gpu_label(gpu, sizeof(gpu), sl->dev);
	fmt_duration(per, sizeof(per), period);
	fmt_duration(span, sizeof(span), g->span);
	f = dr_add(r, "workload.starved", DR_WARNING,
	           "GPU %u waits for its input: busy %.0f %% of each ~%s cycle, idle the rest",
	           sl->dev->index, duty * 100, per);
	dr_evidence(f,
	            "%s: utilisation below %.0f %% in %zu and above %.0f %% in %zu of %zu "
	            "samples over %s, %zu switches between the two",
	            gpu, STARVE_LOW, lo, STARVE_HIGH, hi, nv, span, switches);
	dr_evidence(f, "cycle: period about %s, duty cycle %.0f %% (mean utilisation %.0f %%)", per,
	            duty * 100, mean);
	if (o) {
		proc_label(&sb, o->p);
		dr_evidence(f, "main process: %s", sb.buf);
		evidence_command(f, o->p);
	}
	if (o && o->cpu_low_n >= 2) {
		double ch = o->cpu_high_n ? o->cpu_high / (double)o->cpu_high_n : NAN;

		cl = o->cpu_low / (double)o->cpu_low_n;

		if (isnan(ch))
			dr_evidence(f, "its CPU while the GPU waits: %.0f %% of one core", cl);
		else
			dr_evidence(
			        f,
			        "its CPU while the GPU waits: %.0f %% of one core (%.0f %% while "
			        "the GPU computes)",
			        cl, ch);
	}
	/* between idle and one core busy: the CPU figures do not tell the causes apart */
	if (cl >= CPU_ONE_CORE_LOW && cl <= CPU_ONE_CORE_HIGH) {
		dr_meaning(f,
		           "The GPU finishes each batch and then waits for the next one, while "
		           "the process keeps about one CPU core busy: a single-threaded input "
		           "pipeline (data loading, decoding, augmentation in the main process) "
		           "is CPU-bound and sets the pace, not the GPU. About %.0f %% of the "
		           "GPU's time is lost.",
		           (1 - duty) * 100);
		dr_action(f,
		          "Prepare batches in parallel: PyTorch DataLoader(num_workers=N) with N "
		          "near the CPU cores per GPU, pin_memory=True, prefetch_factor=2..4, "
		          "persistent_workers=True (tf.data: .map(num_parallel_calls="
		          "tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)); move decoding and "
		          "augmentation to the GPU (NVIDIA DALI) or pre-process the dataset "
		          "once and cache it.");
	} else if (cl > CPU_ONE_CORE_HIGH) {
		dr_meaning(f,
		           "The GPU waits for each batch while the process keeps %.1f CPU cores "
		           "busy: data preparation on the CPU is the bottleneck even with "
		           "several threads. About %.0f %% of the GPU's time is lost.",
		           cl / 100, (1 - duty) * 100);
		dr_action(f, "Make each batch cheaper on the CPU: more DataLoader workers if cores "
		             "are free (num_workers), pin_memory=True, prefetch_factor; decode and "
		             "augment on the GPU (NVIDIA DALI), or pre-process and cache the "
		             "dataset in a compact format.");
	} else if (cl < CPU_IDLE) {
		dr_meaning(f,
		           "The GPU waits for each batch while the process itself hardly uses "
		           "the CPU (%.0f %% of a core): it waits too, on storage (reading the "
		           "dataset), on worker processes, or on synchronisation with other "
		           "processes or GPUs. About %.0f %% of the GPU's time is lost.",
		           cl, (1 - duty) * 100);
		dr_action(f, "Find what the process waits on: 'iostat -x 1' or 'pidstat -d 1' for "
		             "the disk (copy the dataset to local NVMe or cache it in memory), "
		             "the DataLoader workers' CPU ('top -H'; more num_workers, "
		             "prefetch_factor), and collective operations in a profile (Nsight "
		             "Systems: nsys profile).");
	} else {
		dr_meaning(f,
		           "The GPU finishes each batch and then waits for the next: input stalls. "
		           "Causes, most likely first: data loading on the CPU (too few DataLoader "
		           "workers), slow storage, synchronisation (host-device copies, "
		           "collectives). The samples hold no CPU figures for the process to tell "
		           "them apart. About %.0f %% of the GPU's time is lost.",
		           (1 - duty) * 100);
		dr_action(
		        f,
		        "Watch the process's CPU ('top -p PID': about 100 %% means a "
		        "single-threaded loader) and the disk ('iostat -x 1'). Then: "
		        "DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2..4), faster "
		        "or local storage, or a cached, pre-processed dataset; profile with Nsight "
		        "Systems (nsys profile) to see the gaps.");
	}
	strbuf_release(&sb);
}

/* --- workload.busy_low_power --------------------------------------------------------- */

static void
check_busy_low_power(const struct digest *g, size_t j, struct dr_report *r)
{
	const struct slot *sl = &g->slot[j];
	size_t n = g->w->nr, nv = 0, hit = 0, nclk = 0, nsm = 0;
	double pw = 0, lim = 0, clk = 0, clkmax = 0, sm = 0;
	double last_sm = NAN, last_sm_t = 0;
	struct dr_finding *f;
	char gpu[160], span[32];

	for (size_t k = 0; k < n; k++) {
		double u = sl->util[k], p = sl->power[k], l = sl->limit[k], smk = sl->sm[k];
		int cs = 0, ss = 0; /* -1 low, 1 high, 0 unknown */

		/*
		 * NVML hands out per-process SM use about once a second: between
		 * two readings, the last one (up to 5 s old) stands.
		 */
		if (!isnan(smk)) {
			last_sm = smk;
			last_sm_t = sl->t[k];
		} else if (!isnan(last_sm) && sl->t[k] - last_sm_t <= 5) {
			smk = last_sm;
		}
		if (isnan(u))
			continue;
		nv++;
		if (u < BUSY_UTIL || isnan(p) || isnan(l) || l <= 0 || p >= LOW_POWER * l)
			continue;
		if (!isnan(sl->clk[k]) && !isnan(sl->clkmax[k]) && sl->clkmax[k] > 0)
			cs = sl->clk[k] < LOW_CLOCK * sl->clkmax[k] ? -1 : 1;
		if (!isnan(smk))
			ss = smk < LOW_SM ? -1 : smk >= HIGH_SM ? 1 : 0;
		/*
		 * Only the processes' own SM use tells a small kernel from a busy
		 * GPU held at low clocks: without it, or with it high, not this.
		 */
		if (ss != -1)
			continue;
		hit++;
		pw += p;
		lim += l;
		if (cs) {
			clk += sl->clk[k];
			clkmax += sl->clkmax[k];
			nclk++;
		}
		sm += smk;
		nsm++;
	}
	if (nv < MIN_SAMPLES || (double)hit < BUSY_LOW_SHARE * (double)nv)
		return;
	gpu_label(gpu, sizeof(gpu), sl->dev);
	fmt_duration(span, sizeof(span), g->span);
	f = dr_add(r, "workload.busy_low_power", DR_INFO,
	           "GPU %u shows %.0f %% utilisation but draws %.0f %% of its power limit",
	           sl->dev->index, mean_of(sl->util, n, NULL), 100 * pw / lim);
	dr_evidence(f, "%s: utilisation >= %.0f %% at low power in %zu of %zu samples over %s", gpu,
	            BUSY_UTIL, hit, nv, span);
	dr_evidence(f, "power: %.0f W of a %.0f W limit (%.0f %%) on average in those samples",
	            pw / (double)hit, lim / (double)hit, 100 * pw / lim);
	if (nclk)
		dr_evidence(f, "SM clock: %.0f MHz of %.0f MHz (%.0f %%)", clk / (double)nclk,
		            clkmax / (double)nclk, 100 * clk / clkmax);
	if (nsm)
		dr_evidence(f, "SM use of its processes: %.0f %%", sm / (double)nsm);
	dr_meaning(f,
	           "Utilisation counts the time in which some kernel runs, not how much of the GPU "
	           "it uses: one small kernel after another (small batches, element-wise "
	           "operations, a launch-bound loop, one thread block) keeps it at 100 %% while "
	           "most SMs idle, which the low power%s shows. The GPU has much more to give.",
	           nclk ? " and clocks" : "");
	dr_action(f,
	          "Profile a few steps with Nsight Systems ('nsys profile -t cuda,nvtx python "
	          "train.py') to see kernel sizes and gaps; then give each kernel more work: "
	          "larger batches, fused operations (torch.compile, CUDA graphs for launch-bound "
	          "loops), or several independent jobs on the GPU (MPS, MIG).");
}

/* --- workload.idle_holder ------------------------------------------------------------ */

static void
check_idle_holders(const struct digest *g, const struct dr_window *w, struct dr_report *r)
{
	double now = w->s[w->nr - 1].time;

	for (size_t i = 0; i < g->nr_track; i++) {
		const struct track *t = &g->track[i];
		const struct slot *sl = &g->slot[t->slot];
		const struct gpu_proc *p = t->p;
		double total = sl->total[w->nr - 1], idle_for, mem = t->idle_min_mem;
		bool server, notebook;
		struct dr_finding *f;
		struct strbuf sb = STRBUF_INIT;
		char gpu[160], dur[32], held[32], when[48], total_s[32];

		if (!t->idle_now || t->last < now || t->idle_samples < IDLE_MIN_SAMPLES)
			continue;
		idle_for = now - t->idle_since;
		if (idle_for < IDLE_MIN_SECONDS)
			continue;
		if (mem < IDLE_MIN_BYTES && (isnan(total) || mem < IDLE_MIN_SHARE * total))
			continue;
		server = is_server(p);
		notebook = is_notebook(p);
		gpu_label(gpu, sizeof(gpu), sl->dev);
		fmt_duration(dur, sizeof(dur), idle_for);
		fmt_bytes(held, sizeof(held), mem);
		proc_label(&sb, p);
		f = dr_add(r, "workload.idle_holder", server ? DR_INFO : DR_WARNING,
		           "%s %s holds %s of GPU %u and has computed nothing for %s",
		           server     ? "Inference server"
		           : notebook ? "Notebook kernel"
		                      : "Process",
		           sb.buf, held, sl->dev->index, dur);
		if (!isnan(total) && total > 0) {
			fmt_bytes(total_s, sizeof(total_s), total);
			dr_evidence(
			        f,
			        "%s: %s held (%.0f %% of %s), SM use 0 %% in %zu samples over %s",
			        gpu, held, 100 * mem / total, total_s, t->idle_samples, dur);
		} else {
			dr_evidence(f, "%s: %s held, SM use 0 %% in %zu samples over %s", gpu, held,
			            t->idle_samples, dur);
		}
		dr_evidence(f, "process: %s", sb.buf);
		evidence_command(f, p);
		if (!isnan(t->start_time)) {
			local_time(when, sizeof(when), t->start_time);
			fmt_duration(dur, sizeof(dur), now - t->start_time);
			dr_evidence(f, "started %s (%s before the last sample)", when, dur);
		}
		if (server) {
			dr_meaning(
			        f,
			        "An inference server keeps its model in GPU memory and waits for "
			        "requests: idle by design. It has had none for a while; the memory "
			        "stays unavailable to other work.");
			dr_action(
			        f,
			        "Nothing, if it is meant to serve. Otherwise stop it, or scale it to "
			        "zero when unused (Kubernetes: KEDA or Knative; ollama: OLLAMA_KEEP_"
			        "ALIVE unloads idle models).");
		} else {
			dr_meaning(
			        f,
			        "The process keeps GPU memory allocated but runs no kernels: %s. Other "
			        "jobs on this GPU get that much less memory (and run out of it), and a "
			        "scheduler counts the GPU as taken.",
			        notebook
			                ? "a Jupyter kernel keeps every tensor and the framework's "
			                  "cache until the kernel is shut down, long after the "
			                  "cell ran"
			                : "finished or paused work that did not release it, or a "
			                  "process waiting on something else");
			dr_action(
			        f,
			        "If it is yours: free the memory (del the tensors and models, then "
			        "torch.cuda.empty_cache()), or end the process%s. %s"
			        "Otherwise ask its owner%s%s.",
			        notebook ? " (Kernel > Shut Down Kernel in Jupyter)" : "",
			        notebook ? "On a shared JupyterHub, cull idle kernels "
			                   "(jupyterhub-idle-culler, MappingKernelManager."
			                   "cull_idle_timeout). "
			                 : "",
			        p->user ? ", " : "", p->user ? p->user : "");
		}
		strbuf_release(&sb);
	}
}

/* --- workload.memory_growth ---------------------------------------------------------- */

/* Slope (per second) of a least-squares line through (t[k], v[k]) for k in [from, to). */
static double
slope_of(const double *t, const double *v, size_t from, size_t to, size_t *count)
{
	double st = 0, sv = 0, stt = 0, stv = 0, n = 0, den;

	for (size_t k = from; k < to; k++) {
		if (isnan(t[k]) || isnan(v[k]))
			continue;
		st += t[k] - t[from];
		sv += v[k];
		stt += (t[k] - t[from]) * (t[k] - t[from]);
		stv += (t[k] - t[from]) * v[k];
		n++;
	}
	*count = (size_t)n;
	den = n * stt - st * st;
	return n >= 2 && den > 0 ? (n * stv - st * sv) / den : NAN;
}

static double
track_slope(const struct track *t)
{
	double n = (double)t->nm, den = n * t->stt - t->st * t->st;

	return t->nm >= 2 && den > 0 ? (n * t->stm - t->st * t->sm) / den : NAN;
}

static void
check_memory_growth(const struct digest *g, size_t j, struct dr_report *r)
{
	const struct slot *sl = &g->slot[j];
	size_t n = g->w->nr, cnt, cnt2, ups = 0, last = SIZE_MAX, first = SIZE_MAX;
	double rise = 0, fall = 0; /* bytes moved up and down, step by step */
	double slope, late, total = NAN, used, growth, best = 0;
	const struct track *grower = NULL;
	struct dr_finding *f;
	char gpu[160], span[32], a[32], b[32], c[32], eta[32];

	for (size_t k = 0; k < n; k++) {
		if (isnan(sl->used[k]) || isnan(sl->total[k]) || sl->total[k] <= 0)
			continue;
		total = sl->total[k];
		if (last != SIZE_MAX) {
			double step = sl->used[k] - sl->used[last];

			if (step > 0) {
				ups++;
				rise += step;
			} else {
				fall -= step;
			}
		} else {
			first = k;
		}
		last = k;
	}
	if (last == SIZE_MAX)
		return;
	used = sl->used[last];
	if (used <= GROW_FULL * total)
		return;
	slope = slope_of(sl->t, sl->used, 0, n, &cnt);
	late = slope_of(sl->t, sl->used, n / 2, n, &cnt2);
	if (cnt < MIN_SAMPLES || isnan(slope) || slope <= 0 || isnan(late) || late <= 0)
		return;
	growth = slope * (sl->t[last] - sl->t[first]);
	(void)cnt2;
	if (growth < GROW_MIN_SHARE * total || ups < GROW_MIN_UPS ||
	    rise < GROW_MONOTONIC * (rise + fall))
		return;
	for (size_t i = 0; i < g->nr_track; i++) {
		double s = track_slope(&g->track[i]);

		if (g->track[i].slot == j && !isnan(s) && s > best) {
			best = s;
			grower = &g->track[i];
		}
	}
	gpu_label(gpu, sizeof(gpu), sl->dev);
	fmt_duration(span, sizeof(span), sl->t[last] - sl->t[first]);
	fmt_bytes(a, sizeof(a), used);
	fmt_bytes(b, sizeof(b), total);
	fmt_bytes(c, sizeof(c), growth);
	fmt_duration(eta, sizeof(eta), (total - used) / late);
	f = dr_add(r, "workload.memory_growth", DR_WARNING,
	           "GPU %u's memory is %.0f %% full and still growing (%s over %s)", sl->dev->index,
	           100 * used / total, c, span);
	fmt_bytes(c, sizeof(c), sl->used[first]);
	dr_evidence(f, "%s: %s of %s used in the newest sample; %s at the start of the window", gpu,
	            a, b, c);
	fmt_bytes(c, sizeof(c), slope * 60);
	dr_evidence(f,
	            "trend: +%s a minute (least squares over %zu samples), %.0f %% of the "
	            "movement upward; at the recent rate full in about %s",
	            c, cnt, 100 * rise / (rise + fall), eta);
	if (grower) {
		struct strbuf sb = STRBUF_INIT;

		proc_label(&sb, grower->p);
		fmt_bytes(a, sizeof(a), grower->mem_first);
		fmt_bytes(b, sizeof(b), grower->mem_last);
		fmt_bytes(c, sizeof(c), best * 60);
		dr_evidence(f, "growing: %s, from %s to %s (+%s a minute)", sb.buf, a, b, c);
		evidence_command(f, grower->p);
		strbuf_release(&sb);
	}
	dr_meaning(f,
	           "Memory that keeps growing near the limit ends in an out-of-memory error "
	           "(CUDA error: out of memory). Steady growth in a loop is a leak: tensors kept "
	           "alive across iterations (a loss accumulated with its graph, outputs appended "
	           "to a list, a growing cache), or fragmentation of the allocator's cache with "
	           "varying shapes.");
	dr_action(f, "In PyTorch: accumulate loss.item() rather than loss, detach what is kept, "
	             "check torch.cuda.memory_allocated() against memory_reserved() over steps "
	             "(reserved growing alone is fragmentation: "
	             "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fixed shapes or "
	             "bucketing); torch.cuda.memory._record_memory_history() shows who allocates. "
	             "Save a checkpoint before it runs out.");
}

/* --- workload.suspect_process -------------------------------------------------------- */

static bool
reported(const struct track *const *done, size_t nr, const struct track *t)
{
	for (size_t i = 0; i < nr; i++)
		if (done[i]->pid == t->pid && done[i]->start_ticks == t->start_ticks)
			return true;
	return false;
}

static void
check_suspects(const struct digest *g, struct dr_report *r)
{
	const struct track **done = NULL;
	size_t nr_done = 0, alloc_done = 0;

	for (size_t i = 0; i < g->nr_track; i++) {
		const struct track *t = &g->track[i];
		const struct gpu_proc *p = t->p;
		const char *cmd = p->cmdline ? p->cmdline : "";
		const char *name = p->name ? p->name : "";
		int strong = 0, medium = 0, weak = 0;
		bool hidden = false;
		struct dr_finding *f;
		struct strbuf sb = STRBUF_INIT, ev = STRBUF_INIT;
		char span[32];

		if (reported(done, nr_done, t))
			continue;
		if (named(p, miner_names, true)) {
			strong++;
			strbuf_addf(&ev, "name: '%s' is the name of a known cryptocurrency miner\n",
			            *name ? name : cmd);
		}
		if (strstr(cmd, "stratum+") || strstr(cmd, "stratum1+") ||
		    strstr(cmd, "stratum2+")) {
			strong++;
			strbuf_addstr(&ev,
			              "command line: connects to a mining pool (stratum:// URL)\n");
		}
		if (strstr(cmd, "--donate-level") || strstr(cmd, "--coin ") ||
		    strstr(cmd, "-a kawpow") || strstr(cmd, "--algo ")) {
			medium++;
			strbuf_addstr(&ev, "command line: takes a miner's options (--algo, --coin, "
			                   "--donate-level)\n");
		}
		if (under_tmp(name) || under_tmp(cmd)) {
			medium++;
			strbuf_addstr(&ev, "executable: runs from a temporary directory (/tmp, "
			                   "/var/tmp, /dev/shm)\n");
		}
		if (strstr(name, "(deleted)") || strstr(cmd, "(deleted)")) {
			medium++;
			strbuf_addstr(&ev, "executable: deleted after it started\n");
		}
		if (kernel_thread_name(name) || (*cmd == '[' && kernel_thread_name(cmd))) {
			medium++;
			strbuf_addstr(&ev,
			              "name: looks like a kernel thread, which never uses a GPU\n");
		}
		if (p->host == PHOST_OK && !*cmd) {
			hidden = true;
			weak++;
			strbuf_addstr(&ev,
			              "command line: empty (the process hides its arguments)\n");
		}
		if (t->odd_heavy >= ODD_MIN_SAMPLES && 2 * t->odd_heavy >= t->seen) {
			weak++;
			strbuf_addf(
			        &ev,
			        "heavy GPU use between 00:00 and %02d:00 local time in %zu of its "
			        "%zu samples\n",
			        ODD_HOUR_END, t->odd_heavy, t->seen);
		}
		if (t->seen >= MIN_SAMPLES && t->last - t->first >= IDLE_MIN_SECONDS &&
		    10 * t->heavy >= 9 * t->seen && !p->container) {
			weak++;
			fmt_duration(span, sizeof(span), t->last - t->first);
			strbuf_addf(&ev,
			            "steady heavy compute for %s (SM use >= %.0f %% in %zu of %zu "
			            "samples), outside any container\n",
			            span, HEAVY_SM, t->heavy, t->seen);
		}
		/* weak signs alone only with a hidden command line (night training is normal) */
		if (!strong && !medium && !(hidden && weak >= 2)) {
			strbuf_release(&ev);
			continue;
		}
		ALLOC_GROW(done, nr_done + 1, alloc_done);
		done[nr_done++] = t;
		proc_label(&sb, p);
		f = dr_add(r, "workload.suspect_process", DR_WARNING,
		           "Possible cryptominer or unwanted process on GPU %u: %s",
		           g->slot[t->slot].dev->index, sb.buf);
		for (char *l = ev.buf, *nl; *l; l = nl + 1) {
			nl = strchr(l, '\n');
			*nl = '\0';
			dr_evidence(f, "%s", l);
		}
		dr_evidence(f, "process: %s", sb.buf);
		evidence_command(f, p);
		dr_meaning(
		        f,
		        "Nothing here proves it: these are signs that %s. Miners reach GPU "
		        "machines through leaked credentials, Jupyter servers without a token, "
		        "and vulnerable web services; they run from temporary directories, delete "
		        "their executable, and disguise their names.",
		        strong ? "a cryptocurrency miner is running"
		               : "this process is not what its users expect");
		dr_action(
		        f,
		        "Check who started it and from what: 'ls -l /proc/%u/exe', "
		        "'cat /proc/%u/cmdline | tr \"\\0\" \" \"', 'ps -o user,lstart,args -p %u', its "
		        "network connections ('ss -tnp | grep pid=%u'), and the owner's recent "
		        "logins. If nobody expects it: keep a copy of the executable, kill it, find "
		        "how it got in (cron, systemd units, ~/.bashrc, authorized_keys), and rotate "
		        "the credentials it could have used.",
		        (unsigned)p->pid, (unsigned)p->pid, (unsigned)p->pid, (unsigned)p->pid);
		strbuf_release(&sb);
		strbuf_release(&ev);
	}
	free(done);
}

/* --- workload.desktop ---------------------------------------------------------------- */

static void
check_desktop(const struct digest *g, size_t j, struct dr_report *r)
{
	struct strbuf names = STRBUF_INIT;
	size_t nr = 0;
	struct dr_finding *f;
	char gpu[160], mem[32];
	double held = 0;

	for (size_t i = 0; i < g->nr_track; i++) {
		const struct track *t = &g->track[i];

		if (t->slot != j)
			continue;
		if (!named(t->p, compositor_names, false)) {
			strbuf_release(&names);
			return;
		}
		if (nr++ < 6)
			strbuf_addf(&names, "%s%s %u", nr > 1 ? ", " : "",
			            t->p->name ? t->p->name : "?", (unsigned)t->pid);
		if (t->mem_max > 0)
			held += t->mem_max;
	}
	if (!nr)
		return;
	gpu_label(gpu, sizeof(gpu), g->slot[j].dev);
	f = dr_add(r, "workload.desktop", DR_INFO, "GPU %u is used by the desktop only",
	           g->slot[j].dev->index);
	if (held > 0) {
		fmt_bytes(mem, sizeof(mem), held);
		dr_evidence(f, "%s: %s (%s of memory at most)", gpu, names.buf, mem);
	} else {
		dr_evidence(f, "%s: %s", gpu, names.buf);
	}
	dr_meaning(f, "A display server or compositor draws the desktop on this GPU: normal, and "
	              "no compute job is running on it.");
	strbuf_release(&names);
}

/* --- the check ----------------------------------------------------------------------- */

void
dr_check_workload(const struct dr_ctx *ctx, struct dr_report *r)
{
	const struct dr_window *w = ctx->window;
	struct digest g;
	size_t before = r->nr;

	if (!w || !w->s || !w->nr)
		return; /* one sample: no pattern to see */
	digest_init(&g, w);
	digest_fill(&g);
	if (w->nr < MIN_SAMPLES) {
		struct dr_finding *f =
		        dr_add(r, "workload.window_short", DR_INFO,
		               "%zu samples are too few to judge workload patterns", w->nr);

		dr_evidence(f, "window: %zu samples from %s", w->nr,
		            w->source ? w->source : "live");
		dr_action(f, "Watch longer: 'gpuscope doctor --watch 60' (or more, while the job "
		             "runs), or give a longer stretch of a recording (--recording FILE).");
	} else {
		for (size_t j = 0; j < g.nr_slot; j++) {
			check_starved(&g, j, r);
			check_busy_low_power(&g, j, r);
			check_memory_growth(&g, j, r);
		}
		check_idle_holders(&g, w, r);
	}
	check_suspects(&g, r);
	for (size_t j = 0; j < g.nr_slot; j++)
		check_desktop(&g, j, r);
	if (r->nr == before) {
		char span[32];

		fmt_duration(span, sizeof(span), g.span);
		dr_add(r, "workload.ok", DR_OK,
		       "No workload problem seen in %zu samples over %s (%s)", w->nr, span,
		       w->source ? w->source : "live");
	}
	digest_release(&g);
}

/* --- the catalog --------------------------------------------------------------------- */

const struct dr_explain dr_catalog_workload[] = {
	{ "workload.busy_low_power", "A GPU shows full utilisation at low power and clocks",
	  "GPU utilisation, as NVML and nvidia-smi report it, is the share of time in\n"
	  "which at least one kernel was running: one tiny kernel occupying a single SM\n"
	  "counts as 100 %. A GPU that really works draws power near its limit and runs\n"
	  "its SM clock near the maximum; 100 % utilisation below 40 % of the power\n"
	  "limit with low clocks (or low SM use per process) means kernels too small\n"
	  "to fill the GPU, run one after another.\n"
	  "Causes: small batches, many small element-wise operations, launch-bound\n"
	  "Python loops, a kernel launched with few blocks.\n"
	  "How it is found: utilisation >= 90 %, power < 40 % of the enforced limit,\n"
	  "and the processes' SM use < 30 % (NVML's per-process readings, the last one\n"
	  "standing for up to 5 s), in 60 % of the samples or more. Low clocks alone\n"
	  "are not enough: a busy GPU held at low clocks looks the same without the SM\n"
	  "use, and held-down clocks are a health matter (health.clocks.low).\n"
	  "What to do: profile (Nsight Systems, 'nsys profile'), then larger batches,\n"
	  "fused kernels (torch.compile), CUDA graphs, or share the GPU (MPS, MIG)." },
	{ "workload.desktop", "A GPU is used by the desktop only",
	  "Display servers and compositors (Xorg, Xwayland, gnome-shell, kwin, sway,\n"
	  "mutter, plasmashell, ...) render the desktop on a GPU and hold a little of its\n"
	  "memory. When they are the only processes on a GPU, that is normal: no compute\n"
	  "job runs there. Reported at info level only, and only when no other process\n"
	  "used the GPU during the window." },
	{ "workload.idle_holder", "A process holds GPU memory but computes nothing",
	  "A process with more than 1 GiB (or 10 % of the GPU's memory) allocated whose\n"
	  "SM use stayed at 0 % for 10 minutes or more, up to the newest sample. The\n"
	  "classic case is a Jupyter notebook kernel: tensors and the framework's\n"
	  "caching allocator keep their memory until the kernel is shut down. Others:\n"
	  "a job paused in a debugger, a finished run that waits for input, a worker\n"
	  "whose peers died.\n"
	  "Inference servers (tritonserver, vLLM, text-generation-inference, ollama,\n"
	  "TorchServe, ...) are idle by design between requests: they are reported at\n"
	  "info level only.\n"
	  "What to do: free the memory (del tensors and models, torch.cuda.empty_cache()),\n"
	  "shut the kernel down, or cull idle kernels on a shared JupyterHub\n"
	  "(jupyterhub-idle-culler, MappingKernelManager.cull_idle_timeout).\n"
	  "A window shorter than 10 minutes never reports this." },
	{ "workload.memory_growth", "GPU memory is nearly full and still growing",
	  "Memory used above 90 % of the GPU's memory in the newest sample, growing\n"
	  "steadily across the window: a positive least-squares slope over the whole\n"
	  "window and over its second half, at least 0.5 % of the memory gained, and\n"
	  "three rising steps in four among the steps that change. The process whose\n"
	  "own memory grows fastest is named.\n"
	  "Causes: a leak (tensors kept alive across iterations: a loss summed with its\n"
	  "graph, outputs appended to a list, caches), or fragmentation of the caching\n"
	  "allocator with varying shapes (reserved grows while allocated does not).\n"
	  "It ends in 'CUDA error: out of memory'. Memory that is full but flat (a\n"
	  "framework that reserves most of the GPU up front) is not reported." },
	{ "workload.ok", "No workload problem over the window",
	  "The samples of the window show no starved GPU, no busy-but-idle GPU, no idle\n"
	  "memory holder, no memory growth near the limit and no suspect process." },
	{ "workload.starved", "A GPU waits for its input between bursts of work",
	  "The GPU's utilisation swings between near 0 % and near 100 %: it computes a\n"
	  "batch quickly, then waits for the next. The mean utilisation hides this; the\n"
	  "pattern shows it. How it is found: at least 80 % of the samples below 10 %\n"
	  "or above 90 %, at least four switches between the two, and the GPU busy for\n"
	  "5 % to less than 75 % of the time (the duty cycle); the period is the time\n"
	  "between the starts of busy phases. Healthy training with short dips (busy\n"
	  "75 % of the time or more) is not reported.\n"
	  "Causes, most likely first:\n"
	  "  1. Data loading on the CPU: a single-threaded pipeline (num_workers=0), or\n"
	  "     too few workers for the decoding and augmentation. The sign is the\n"
	  "     process keeping about one CPU core busy while the GPU waits.\n"
	  "  2. Storage: reading the dataset from a network file system or a slow disk.\n"
	  "     The process waits with little CPU use.\n"
	  "  3. Synchronisation: host-device copies that block (.item(), .cpu() every\n"
	  "     step), collectives waiting for a slower rank.\n"
	  "What to do: DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2..4,\n"
	  "persistent_workers=True), tf.data's AUTOTUNE, GPU decoding (NVIDIA DALI),\n"
	  "local or cached datasets; Nsight Systems shows the gaps and what fills them.\n"
	  "Samples taken less often than half the period cannot see the pattern." },
	{ "workload.suspect_process", "A process on a GPU may be a cryptominer or unwanted",
	  "Signs looked for: the name of a known miner (xmrig, t-rex, nbminer, lolminer,\n"
	  "PhoenixMiner, gminer, ethminer, nanominer, TeamRedMiner, BzMiner, ...), a\n"
	  "stratum:// mining-pool URL or miner options in the command line, an\n"
	  "executable under /tmp, /var/tmp or /dev/shm or deleted after it started, a\n"
	  "name disguised as a kernel thread (kernel threads never use a GPU); and as\n"
	  "weak signs only, reported with a stronger one or two together: an empty\n"
	  "command line, heavy use between 00:00 and 05:00 local time, steady heavy\n"
	  "compute for 10 minutes or more outside any container.\n"
	  "None of these proves anything: the finding says 'possible'. Verify with\n"
	  "/proc/PID/exe, its command line, its owner and its network connections\n"
	  "before acting; if nobody expects it, keep a copy, kill it, find how it got\n"
	  "in (cron, systemd units, shell start-up files, authorized_keys, an exposed\n"
	  "Jupyter) and rotate credentials." },
	{ "workload.window_short", "Too few samples to judge workload patterns",
	  "Workload patterns need a window of samples: 'gpuscope doctor --watch 60'\n"
	  "samples for a minute while the job runs, and '--recording FILE' reads a\n"
	  "stretch of a recording. Six samples are the least; idle holders need 10\n"
	  "minutes." },
	{ NULL, NULL, NULL },
};
