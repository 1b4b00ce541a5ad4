#!/usr/bin/env python3
"""Write the benchmark's fake-NVML scenario: 8 busy H100 GPUs and 200 processes.

    bench/make-scenario.py [--gpus 8] [--procs 200] [--pids-file FILE] [-o OUT]

The processes are spread round-robin over the GPUs (25 each with the
defaults): on every GPU one large job (a training or inference worker, 20 to
36 GiB) and many small ones (notebooks, small inference replicas, 0.4 to 1.5
GiB), each with its own SM and memory utilisation (a few idle). The GPU's
memory_used is the sum of its processes' memory, its utilisation and power
follow from theirs, so the numbers add up as on a real machine. The
processes share what the GPU has: when their memory would pass what is left
of it (total less reserved, less 1 GiB of headroom), every process's share is
scaled down by the same factor (at least 1 MiB each), so a GPU never shows
more used than it holds, at any process count. Up to 25 processes a GPU (the
200 of bench/status.sh) nothing is scaled.

--pids-file names a file with one pid per line: those become the processes'
pids, so that every tool finds a real process in /proc for each of them (the
benchmark starts that many sleeping processes and passes their pids). Without
it, pids 100001... are used (tools will not find them in /proc). The name
given to nvmlSystemGetProcessName is read from /proc/PID/comm when the pid
exists. Values are constant (no time expression), and the output is the same
for the same pids (seeded random numbers). --expect writes the per-process
values as JSON, so the benchmark can check what each tool reports. See
docs/scenario-format.md.
"""

import argparse
import json
import random
import sys

MIB = 1024 * 1024
TOTAL_MIB = 81559
RESERVED_MIB = 479
# what the processes may use of a GPU, all together
BUDGET_MIB = TOTAL_MIB - RESERVED_MIB - 1024
# PCI bus ids of the eight SXM5 GPUs of a DGX H100 / HGX H100 board
BUS_IDS = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]


def gpu_section(i, procs):
    """One [gpu] section for GPU i whose processes are procs (list of dicts)."""
    used = sum(p["mem_mib"] for p in procs)
    sm = min(100, sum(p["sm"] for p in procs))
    mem_util = min(100, sum(p["mem"] for p in procs))
    busy = sm / 100.0
    bus = BUS_IDS[i] if i < len(BUS_IDS) else "%02X" % (0xE0 + i - len(BUS_IDS))
    power = int(72000 + busy * (690000 - 72000))
    temp = int(31 + busy * 38) + i % 3
    clock = 1980 if busy > 0.05 else 345
    return "\n".join([
        "[gpu]",
        "name = NVIDIA H100 80GB HBM3",
        "uuid = GPU-b3c1d6e2-7a4f-4e58-9c21-5f0e8d7a%04x" % i,
        "serial = 16523230%05d" % (1200 + i),
        "vbios = 96.00.A5.00.01",
        "inforom_image = G520.0200.00.05",
        "board_part_number = 692-2G520-0200-000",
        "pci_bus_id = 00000000:%s:00.0" % bus,
        "pci_device_id = 0x233010DE",
        "pci_subsystem_id = 0x16C110DE",
        "brand = 14",
        "architecture = 9",
        "compute_capability = 9.0",
        "minor_number = %d" % i,
        "memory_total = %d MiB" % TOTAL_MIB,
        "memory_reserved = %d MiB" % RESERVED_MIB,
        "memory_used = %d MiB" % used,
        "bar1_total = 131072 MiB",
        "bar1_used = %d MiB" % (used + 2),
        "temperature = %d" % temp,
        "memory_temperature = %d" % (temp - 6),
        "temp_shutdown = 92",
        "temp_slowdown = 89",
        "temp_gpu_max = 87",
        "temp_mem_max = 95",
        "fail = nvmlDeviceGetFanSpeed* NOT_SUPPORTED",
        "fail = nvmlDeviceGetNumFans NOT_SUPPORTED",
        "power_usage = %d" % power,
        "power_instant = %d" % (power - 9000),
        "power_limit_enforced = 700000",
        "power_limit = 700000",
        "power_limit_default = 700000",
        "power_limit_min = 200000",
        "power_limit_max = 700000",
        "energy = %d" % (48_000_000_000 + i * 1_234_567_000),
        "util_gpu = %d" % sm,
        "util_memory = %d" % mem_util,
        "util_encoder = 0",
        "util_decoder = 0",
        "util_jpeg = 0",
        "util_ofa = 0",
        "clock_graphics = %d" % clock,
        "clock_sm = %d" % clock,
        "clock_mem = 2619",
        "clock_video = %d" % (1545 if busy > 0.05 else 765),
        "max_clock_graphics = 1980",
        "max_clock_sm = 1980",
        "max_clock_mem = 2619",
        "max_clock_video = 1545",
        "pstate = 0",
        "clocks_event_reasons = %s" % ("0x0" if busy > 0.05 else "0x1"),
        "clocks_event_reasons_supported = 0x1FF",
        "pcie_gen = 5",
        "pcie_gen_max = 5",
        "pcie_gen_gpu_max = 5",
        "pcie_width = 16",
        "pcie_width_max = 16",
        "pcie_replay = 0",
        "pcie_tx = %d" % (1_200_000 + i * 1000),
        "pcie_rx = %d" % (3_400_000 + i * 1000),
        "persistence_mode = 1",
        "compute_mode = 0",
        "display_mode = 0",
        "display_active = 0",
        "mig_mode = 0",
        "ecc_mode = 1",
        "ecc_corrected_volatile = 0",
        "ecc_uncorrected_volatile = 0",
        "ecc_corrected_aggregate = 0",
        "ecc_uncorrected_aggregate = 0",
        "retired_sbe = 0",
        "retired_dbe = 0",
        "retired_pending = 0",
        "remapped_corr = 0",
        "remapped_uncorr = 0",
        "remapped_pending = 0",
        "remapped_failure = 0",
        "encoder_sessions = 0",
        "encoder_fps = 0",
        "encoder_latency = 0",
    ]) + "\n"


def proc_name(pid, default):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip() or default
    except OSError:
        return default


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--procs", type=int, default=200)
    ap.add_argument("--pids-file", help="one pid per line (at least --procs of them)")
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--expect", metavar="FILE",
                    help="also write the per-process values as JSON, for checking what tools report")
    args = ap.parse_args()
    if not 1 <= args.gpus <= 64 or args.procs < 0:
        ap.error("--gpus must be 1..64 and --procs >= 0")

    if args.pids_file:
        with open(args.pids_file) as f:
            pids = [int(line) for line in f if line.strip()]
        if len(pids) < args.procs:
            ap.error("%s has %d pids, %d needed" % (args.pids_file, len(pids), args.procs))
        pids = pids[:args.procs]
    else:
        pids = list(range(100001, 100001 + args.procs))

    rnd = random.Random(20260101)
    per_gpu = [[] for _ in range(args.gpus)]
    for n, pid in enumerate(pids):
        g = n % args.gpus
        first = len(per_gpu[g]) == 0
        if first:  # the GPU's big job
            p = dict(mem_mib=rnd.randint(20 * 1024, 36 * 1024), sm=rnd.randint(35, 60),
                     mem=rnd.randint(15, 30))
        elif rnd.random() < 0.15:  # idle: holds memory, computes nothing
            p = dict(mem_mib=rnd.randint(400, 1536), sm=0, mem=0)
        else:
            p = dict(mem_mib=rnd.randint(400, 1536), sm=rnd.randint(1, 3), mem=rnd.randint(0, 2))
        p["pid"] = pid
        p["gpu"] = g
        per_gpu[g].append(p)

    # the processes of a GPU share its memory: scale them into it when they pass it
    for procs in per_gpu:
        used = sum(p["mem_mib"] for p in procs)
        if used > BUDGET_MIB:
            budget = BUDGET_MIB
            for p in procs:
                p["mem_mib"] = max(1, p["mem_mib"] * budget // used)
            # the 1 MiB floor can only pass the budget with over 80,000 processes a GPU
            assert sum(p["mem_mib"] for p in procs) <= TOTAL_MIB - RESERVED_MIB, \
                "too many processes for one GPU's memory"

    out = []
    out.append("# gpuscope benchmark scenario (bench/make-scenario.py): %d H100 GPUs, %d processes\n"
               % (args.gpus, len(pids)))
    out.append("[system]\ndriver_version = 590.48.01\nnvml_version = 13.590.48.01\n"
               "cuda_version = 13010\n\n")
    for g in range(args.gpus):
        out.append(gpu_section(g, per_gpu[g]))
        out.append("\n")
    for g in range(args.gpus):
        for p in per_gpu[g]:
            out.append("[process %d]\ngpu = %d\ntype = compute\nused_memory = %d MiB\n"
                       "sm_util = %d\nmem_util = %d\nname = %s\n\n"
                       % (p["pid"], g, p["mem_mib"], p["sm"], p["mem"],
                          proc_name(p["pid"], "python3")))
    text = "".join(out)
    if args.expect:
        with open(args.expect, "w") as f:
            json.dump({"gpus": args.gpus,
                       "processes": [{"pid": p["pid"], "gpu": p["gpu"],
                                      "used_memory_bytes": p["mem_mib"] * MIB,
                                      "sm_util": p["sm"], "mem_util": p["mem"]}
                                     for g in per_gpu for p in g]}, f, indent=1)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
