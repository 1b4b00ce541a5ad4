/*
 * log.*: the kernel log, read once line by line; each decoder (NVIDIA's
 * here in klog_nvidia.c, amdgpu/i915/xe in klog_drm.c, PCIe AER in klog_aer.c) takes
 * its own lines and reports them afterwards, repeats counted once; the message tables
 * (data/messages, klog_msg.c) read every line and report last, so that a message that
 * follows from a kernel finding is reported as its consequence.
 */
#include "doctor/doctor.h"

#include <stddef.h>
#include <string.h>

#include "doctor/klog.h"

const struct dr_explain dr_catalog_klog[] = {
	{ "log.nvidia.api_mismatch", "NVIDIA libraries and kernel module of different versions",
	  "The kernel module refuses a user-space client (libcuda, libnvidia-ml, nvidia-smi) whose "
	  "version is not exactly its own, and says so in the log: \"API mismatch: the client has "
	  "the version A, but this kernel module has the version B\". CUDA programs and nvidia-smi "
	  "then fail.\n\n"
	  "Causes, most likely first: the driver was updated and the machine not rebooted, so the "
	  "old module is still loaded; a container or a second install brings libraries of "
	  "another version; distribution packages and NVIDIA's .run installer mixed.\n\n"
	  "What to do: reboot, or unload the nvidia modules and load them again, so the installed "
	  "module runs. If it persists, find which libcuda/libnvidia-ml is loaded and reinstall "
	  "one driver so every component has one version." },
	{ "log.nvidia.fallen_off_bus", "an NVIDIA GPU fell off the bus (Xid 79)",
	  "The host lost the GPU's PCIe link: \"GPU has fallen off the bus\", as Xid 79 or in the "
	  "driver's own words. Every program on it failed and the GPU stays unusable until a "
	  "reboot. Each GPU gets one finding, however often the log repeats it.\n\n"
	  "Causes, most likely first: power delivery (supply capacity against the GPUs' power "
	  "limits, millisecond spikes above the limit, cables and splitters); the PCIe "
	  "connection (riser, slot, external cable, link errors before the event); link "
	  "power-state changes (ASPM); overheating; old system BIOS or driver; a defective GPU "
	  "or board. One log line cannot tell them apart.\n\n"
	  "Checklist, cheapest first: 1. update to the current driver of the branch and the "
	  "system BIOS; 2. check power: supply capacity, one cable per connector, cap power "
	  "(nvidia-smi -pl) or clocks (nvidia-smi -lgc) as a test; 3. PCIe: riser, slot and "
	  "cables, the log.aer findings for errors on the GPU's link before the event, boot with "
	  "pcie_aspm=off, a lower PCIe generation; 4. temperature before the event, from a "
	  "recording (gpuscope replay FILE status --at TIME); 5. reseat, swap GPUs or slots to "
	  "see whether it follows the GPU, and RMA a GPU it follows." },
	{ "log.nvidia.gsp_timeout", "the NVIDIA GSP firmware did not answer (Xid 119, 120)",
	  "Recent NVIDIA GPUs run much of the driver in firmware on the GPU System Processor "
	  "(GSP). Xid 119 says an RPC to it timed out (\"Timeout after 6s of waiting for RPC "
	  "response from GPU0 GSP!\"), Xid 120 that it crashed; some drivers log the timeouts "
	  "without an Xid. The GPU then hangs or fails its programs.\n\n"
	  "Causes, most likely first: a driver or firmware bug (several were fixed in later "
	  "releases, such as 525.105.17); suspend/resume or a GPU left in a bad state; hardware, "
	  "when it persists on a current driver.\n\n"
	  "What to do: reset the GPU (nvidia-smi -r) or reboot; update to the current driver of "
	  "the branch; if it persists, run the GPU's diagnostics and report it to NVIDIA with "
	  "nvidia-bug-report.sh." },
	{ "log.nvidia.rm_init_failed", "the NVIDIA driver could not initialise a GPU",
	  "\"RmInitAdapter failed! (0x26:0x56:1474)\": the module loaded but could not bring the "
	  "GPU up, so it cannot be used. The numbers name the failing step for NVIDIA, not the "
	  "cause.\n\n"
	  "Causes, most likely first: a driver that does not fit the GPU (too old, too new, the "
	  "open module on an unsupported GPU, mixed versions); the GSP firmware failing to "
	  "start; firmware settings (Above 4G decoding off for a large-BAR GPU, VM passthrough); "
	  "power or PCIe trouble; a faulty GPU. The NVRM lines just before it usually tell.\n\n"
	  "What to do: read the lines before it; reinstall the current driver of the branch and "
	  "reboot; enable Above 4G decoding; try the GPU in another slot or machine." },
	{ "log.nvidia.xid", "NVIDIA Xid errors in the kernel log",
	  "The NVIDIA driver reports GPU errors as \"NVRM: Xid (PCI:0000:3b:00): 48, ...\": the "
	  "GPU's PCI address, then a code. doctor makes one finding per code and GPU, a storm of "
	  "repeats counted once (with the first and last time), its severity from the code: "
	  "error when the GPU, its memory or a link failed and needs a reset, a reboot or a "
	  "look at the hardware; warning for an application's fault or a degraded state; info "
	  "for events handled as designed. Each finding gives the code's meaning, its possible "
	  "causes (most likely first, with what tells them apart) and what to do now and if it "
	  "recurs.\n\n"
	  "Secondary errors point at their cause: Xid 45 after an NVLink Xid (74, 144-150) or a "
	  "double-bit ECC error (48) on the same GPU is the clean-up after it; Xid 63/64 after "
	  "48 is the remap (or failed remap) of the failed row; Xid 94 is contained to one "
	  "program, 95 is not; Xid 154 announces the recovery (GPU reset, reboot) the fatal Xid "
	  "before it needs, and is shown with that one. Xid 79 is reported as "
	  "log.nvidia.fallen_off_bus, Xid 119 and 120 as log.nvidia.gsp_timeout.\n\n"
	  "The codes gpuscope knows (data/nvidia/xid.tsv, from NVIDIA's Xid catalog):\n"
	  "  8    warning  the GPU stopped processing a channel (watchdog timeout; often with \"RC watchdog: GPU is probably locked\")\n"
	  "  13   warning  graphics/compute engine exception (an SM warp hit an out-of-range or misaligned address, an illegal instruction or an MMU fault)\n"
	  "  31   warning  GPU memory page fault (MMU fault): a program touched memory it does not own\n"
	  "  32   warning  invalid or corrupted push-buffer stream (the command stream the driver sends the GPU over PCIe)\n"
	  "  43   warning  the GPU stopped a channel after a fault in user software; the GPU stays healthy\n"
	  "  45   warning  the driver cleaned up a channel preemptively, because of an earlier error or because its program was killed\n"
	  "  48   error    double-bit (uncorrectable) ECC error in GPU memory\n"
	  "  54   error    auxiliary power is not connected to the board: the GPU runs at reduced clocks\n"
	  "  56   warning  display engine error (older GPUs; unused on Ampere and newer)\n"
	  "  57   error    error programming the video-memory interface (older GPUs; unused on Ampere and newer)\n"
	  "  61   warning  an internal micro-controller hit a breakpoint or warning (unused on Ampere and newer)\n"
	  "  62   error    an internal micro-controller (PMU) halted\n"
	  "  63   info     the GPU recorded a memory row remap or page retirement\n"
	  "  64   error    the GPU failed to remap or retire a memory row\n"
	  "  68   warning  video decoder (NVDEC) exception\n"
	  "  69   warning  graphics engine class error (an invalid method or class from user space)\n"
	  "  74   error    NVLink error\n"
	  "  79   error    the GPU has fallen off the bus: the host lost its PCIe link to it\n"
	  "  92   warning  high rate of single-bit (corrected) ECC errors\n"
	  "  94   warning  contained uncorrectable memory error: only the program using that memory was affected\n"
	  "  95   error    uncontained uncorrectable memory error: it may have affected every program on the GPU\n"
	  "  109  error    context-switch timeout: GPU work could not be preempted in time\n"
	  "  119  error    the GPU System Processor (GSP) firmware did not answer the driver in time\n"
	  "  120  error    the GSP firmware hit an exception or crashed\n"
	  "  122  warning  SPI PMU RPC read failure (unused on Ampere and newer)\n"
	  "  140  error    uncorrectable ECC error that interrupted page offlining or row remapping\n"
	  "  143  error    the GPU failed to initialise\n"
	  "  144  error    NVLink5 (Blackwell) SAW unit error\n"
	  "  145  error    NVLink5 (Blackwell) RLW unit error\n"
	  "  146  error    NVLink5 (Blackwell) TLW unit error\n"
	  "  147  error    NVLink5 (Blackwell) TREX unit error\n"
	  "  148  error    NVLink5 (Blackwell) NVLPW control error\n"
	  "  149  error    NVLink5 (Blackwell) NETIR unit error\n"
	  "  150  error    NVLink5 (Blackwell) MSE unit error\n"
	  "  154  info     the driver announced the recovery action the GPU now needs, after another Xid\n"
	  "Codes not listed are reported as warnings; NVIDIA's Xid catalog "
	  "(docs.nvidia.com/deploy/xid-errors) describes them." },
	{ "log.ok", "the kernel log holds no GPU error",
	  "doctor read the kernel log (/dev/kmsg, the journal, or a --log file) and found no\n"
	  "NVIDIA Xid or driver error, no amdgpu, i915 or xe error and no PCIe AER error of a\n"
	  "GPU in it. The log only reaches back to the last boot (and less on a busy machine,\n"
	  "whose ring buffer wraps): for an earlier crash, pass that boot's log with\n"
	  "--log (journalctl -k -b -1 > kern.log)." },
	{ "log.unread", "the kernel log could not be read",
	  "doctor reads the kernel log (/dev/kmsg) for GPU errors: NVIDIA Xid, amdgpu, i915 and "
	  "xe errors, PCIe AER. Unprivileged users cannot read it where kernel.dmesg_restrict "
	  "is 1 (the default on many distributions), and containers often do not have it.\n\n"
	  "What to do: run doctor as root (sudo gpuscope doctor), or save the log where it can "
	  "be read (sudo dmesg > kern.log, or journalctl -k > kern.log; journalctl -k -b -1 for "
	  "the boot before a crash) and pass it: gpuscope doctor --log kern.log." },
	{ NULL, NULL, NULL },
};

/* Has r a warning or an error from index from on? */
static bool
worse_than_info(const struct dr_report *r, size_t from)
{
	for (size_t i = from; i < r->nr; i++)
		if (r->f[i].severity > DR_INFO)
			return true;
	return false;
}

/*
 * log.ok: no warning or error in the log. The machine's own kernel log is a kernel log; a
 * --log file may hold any program's lines, which the message tables read too.
 */
static void
report_ok(const struct dr_ctx *ctx, size_t lines, struct dr_report *r)
{
	const char *src = ctx->klog_source ? ctx->klog_source : "/dev/kmsg";
	bool kernel = !strcmp(src, "/dev/kmsg") || !strcmp(src, "journalctl --dmesg --boot");
	struct dr_finding *f = dr_add(r, "log.ok", DR_OK, "%s: no GPU error in %zu line%s",
	                              kernel ? "kernel log" : "log", lines, lines == 1 ? "" : "s");

	dr_evidence(f, "read from %s", src);
}

void
dr_check_klog(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct klog_events nv = KLOG_EVENTS_INIT, drm = KLOG_EVENTS_INIT, aer = KLOG_EVENTS_INIT,
	                   msg = KLOG_EVENTS_INIT;
	struct klog_line l = { 0 };
	size_t pos = 0, len;

	if (!ctx->klog) {
		struct dr_finding *f = dr_add(r, "log.unread", DR_INFO,
		                              "the kernel log could not be read: GPU errors in it "
		                              "are not checked");

		dr_evidence(f, "%s: %s", ctx->klog_source ? ctx->klog_source : "/dev/kmsg",
		            ctx->klog_why ? ctx->klog_why : "not read");
		dr_meaning(f, "Xid errors, GPUs that fell off the bus, amdgpu/i915/xe resets and "
		              "PCIe errors are only in the kernel log.");
		dr_action(f, "Run doctor as root (sudo gpuscope doctor), or save the log and pass "
		             "it: 'sudo dmesg > kern.log' or 'journalctl -k > kern.log', then "
		             "'gpuscope doctor --log kern.log'.");
		return;
	}
	len = strlen(ctx->klog);
	while (klog_next(ctx->klog, len, &pos, &l, 0)) {
		/* every line, a kernel decoder's too: a table row may read what it only quotes */
		klog_msg_line(&l, &msg);
		if (!klog_nvidia_line(&l, &nv) && !klog_drm_line(&l, &drm))
			klog_aer_line(&l, &aer);
	}
	{
		size_t before = r->nr;

		klog_nvidia_report(ctx, &nv, r);
		klog_drm_report(ctx, &drm, r);
		klog_aer_report(ctx, &aer, r);
		klog_msg_report(ctx, &msg, r);
		if (!worse_than_info(r, before))
			report_ok(ctx, l.lineno, r);
	}
	klog_events_release(&nv);
	klog_events_release(&drm);
	klog_events_release(&aer);
	klog_events_release(&msg);
}
