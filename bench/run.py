#!/usr/bin/env python3
"""Run the status benchmark's rounds and print the report (bench/status.sh calls this).

    bench/run.py --rounds N --gpus 8 --procs 200 --scenario S --expect E \\
                 --fake-lib L --venv V --outdir D --command "make bench"

Every round runs each command once, in an order rotated from round to round
(so no tool always runs first or right after another), each one under
build/bench/wait4run, which measures the whole process: wall time from fork
to reaped exit, user and system CPU time, and peak RSS (ru_maxrss). The output
of every run is kept (the last one per command in D/) and checked: every run
must show every GPU; the processes each tool lists are counted, and the
values gpuscope reports are compared with the scenario's.

The report goes to stdout and D/report.txt; every sample to D/results.json.
Exit status: 0 when the benchmark ran (whatever the goals' verdicts: this is a
report, not a test), 1 when a tool failed or did not see every GPU.
"""

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GOAL_WALL_RATIO = 20.0   # gpustat median wall / gpuscope median wall, at least
GOAL_CPU_S = 0.010       # gpuscope median CPU (user + system) per snapshot, under
GOAL_RSS_KIB = 8 * 1024  # gpuscope median peak RSS, under


# --- what each tool printed ---------------------------------------------------

def parse_gpuscope(text):
    d = json.loads(text)
    procs = {}
    for p in d.get("processes", []):
        procs[(p["gpu_index"], p["pid"])] = p
    return {
        "gpus": len(d["gpus"]),
        "gpus_ok": sum(1 for g in d["gpus"] if g.get("state") == "ok"),
        "procs": len(d.get("processes", [])),
        "procs_host_ok": sum(1 for p in d.get("processes", []) if p.get("host_info") == "ok"),
        "detail": procs,
    }


def parse_gpustat(text):
    d = json.loads(text)
    procs = {}
    for g in d["gpus"]:
        for p in g.get("processes") or []:
            procs[(g["index"], p["pid"])] = p
    return {"gpus": len(d["gpus"]), "procs": len(procs), "detail": procs}


NVITOP_GPU = re.compile(r"^│\s+(\d+)\s+.*│\s+[0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")
# "│   0    5219 C    root 21.43GiB  35    24   0.0   0.0  0:02  sleep 3600      │"
NVITOP_PROC = re.compile(r"^│\s+(\d+)\s+(\d+)\s+(C\+G|C|G|X)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s")


def parse_nvitop(text):
    gpus = set()
    procs = {}
    for line in text.splitlines():
        m = NVITOP_GPU.match(line)
        if m:
            gpus.add(int(m.group(1)))
            continue
        m = NVITOP_PROC.match(line)
        if m:
            procs[(int(m.group(1)), int(m.group(2)))] = {
                "user": m.group(4), "gpu_mem": m.group(5), "sm": m.group(6), "gmbw": m.group(7)}
    return {"gpus": len(gpus), "procs": len(procs), "detail": procs}


# --- measuring ----------------------------------------------------------------

def measure(wait4run, argv, env, out_path, err_path, res_path):
    """Run argv under wait4run; return (wall s, user s, sys s, maxrss KiB, exit code)."""
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        rc = subprocess.call([wait4run, res_path] + argv, env=env, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=err)
    if rc != 0:
        raise RuntimeError("wait4run failed (%d) for %s" % (rc, " ".join(argv)))
    with open(res_path) as f:
        w, u, s, rss, code = f.read().split()
    return float(w), float(u), float(s), int(rss), int(code)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              cwd=ROOT).stdout.strip()
    except OSError:
        return ""


def machine_info(venv):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.1f GiB" % (kb / 1024 / 1024)
    except (OSError, ValueError, IndexError):
        pass
    commit = sh("git rev-parse --short=12 HEAD")
    if commit and sh("git status --porcelain --untracked-files=no -- src Makefile"):
        commit += " (with uncommitted changes in src/ or Makefile)"
    virt = sh("systemd-detect-virt 2>/dev/null") or "unknown"
    py = os.path.join(venv, "bin", "python")
    return {
        "cpu": cpu or platform.processor() or "unknown",
        "cpus_online": os.cpu_count(),
        "memory": mem,
        "kernel": platform.release(),
        "virtualization": virt,
        "os": sh(". /etc/os-release 2>/dev/null && echo \"$PRETTY_NAME\""),
        "compiler": sh("${CC:-cc} --version 2>/dev/null | head -1"),
        "gpuscope_commit": commit or "unknown",
        "gpuscope_version": sh("build/gpuscope --version"),
        "gpuscope_binary": sh("sha256sum build/gpuscope | cut -c1-16") + " (sha256 prefix of build/gpuscope)",
        "python": sh(shlex.quote(py) + " --version"),
        "python_packages": sh(shlex.quote(py) + " -m pip freeze 2>/dev/null | "
                              "grep -Ei '^(gpustat|nvitop|nvidia-ml-py|psutil)=' | tr '\\n' ' '"),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def pct(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--procs", type=int, default=200)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--fake-lib", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--wait4run", required=True)
    ap.add_argument("--command", default="bench/status.sh")
    args = ap.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    fake_lib = os.path.abspath(args.fake_lib)
    base_env = dict(os.environ)
    for k in ("GPUSCOPE_PROC_ROOT", "GPUSCOPE_NVML", "FAKE_NVML_TIME", "FAKE_NVML_EPOCH",
              "FAKE_NVML_LOG", "LD_LIBRARY_PATH", "LD_PRELOAD", "NO_COLOR", "PYTHONDONTWRITEBYTECODE"):
        base_env.pop(k, None)
    base_env["FAKE_NVML_SCENARIO"] = os.path.abspath(args.scenario)
    base_env.setdefault("TERM", "xterm-256color")
    gs_env = dict(base_env, GPUSCOPE_NVML=fake_lib)
    py_env = dict(base_env, LD_LIBRARY_PATH=os.path.dirname(fake_lib))
    vbin = os.path.join(args.venv, "bin")

    # name, argv, env, parser (None: timed but not checked), in the ratios
    tools = [
        ("gpuscope", ["build/gpuscope", "status", "--json"], gs_env, parse_gpuscope),
        ("gpustat", [os.path.join(vbin, "gpustat"), "--json"], py_env, parse_gpustat),
        ("nvitop", [os.path.join(vbin, "nvitop"), "-1"], py_env, parse_nvitop),
        # where gpuscope's time goes: the process alone, and the GPUs without /proc
        ("gpuscope --version", ["build/gpuscope", "--version"], gs_env, None),
        ("gpuscope --no-processes", ["build/gpuscope", "status", "--json", "--no-processes"],
         gs_env, None),
    ]
    with open(args.expect) as f:
        expect = json.load(f)
    exp_procs = {(p["gpu"], p["pid"]): p for p in expect["processes"]}

    problems = []
    notes = []

    def slug(name):
        return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")

    def check(name, parser, text, stage):
        try:
            r = parser(text)
        except (ValueError, KeyError, TypeError) as e:
            problems.append("%s (%s): output could not be parsed: %s" % (name, stage, e))
            return None
        if r["gpus"] != args.gpus:
            problems.append("%s (%s): saw %d GPUs, not %d" % (name, stage, r["gpus"], args.gpus))
        return r

    res_path = os.path.join(args.outdir, "wait4run.result")

    # one untimed run each: compiles Python's bytecode caches, warms the page
    # cache, and its output is kept for inspection and checked in detail
    first = {}
    for name, argv, env, parser in tools:
        out = os.path.join(args.outdir, slug(name) + ".out")
        err = os.path.join(args.outdir, slug(name) + ".err")
        w, u, s, rss, code = measure(args.wait4run, argv, env, out, err, res_path)
        if code != 0:
            problems.append("%s: exit status %d (see %s)" % (name, code, err))
        if parser:
            with open(out, encoding="utf-8", errors="replace") as f:
                first[name] = check(name, parser, f.read(), "first run")

    # the harness's own floor under peak RSS (a static no-op run by wait4run)
    floor = measure(args.wait4run, [args.wait4run], base_env, os.devnull, os.devnull, res_path)[3]

    samples = {name: [] for name, _, _, _ in tools}
    counts = {name: [] for name, _, _, _ in tools}
    t_start = time.time()
    for r in range(args.rounds):
        k = r % len(tools)
        for name, argv, env, parser in tools[k:] + tools[:k]:
            out = os.path.join(args.outdir, "last-" + slug(name) + ".out")
            err = os.path.join(args.outdir, "last-" + slug(name) + ".err")
            w, u, s, rss, code = measure(args.wait4run, argv, env, out, err, res_path)
            samples[name].append({"round": r, "wall_s": w, "user_s": u, "sys_s": s,
                                  "maxrss_kib": rss, "exit": code})
            if code != 0:
                problems.append("%s round %d: exit status %d (see %s)" % (name, r, code, err))
            if parser:
                with open(out, encoding="utf-8", errors="replace") as f:
                    c = check(name, parser, f.read(), "round %d" % r)
                if c:
                    counts[name].append(c["procs"])
    t_total = time.time() - t_start

    # --- what the tools saw ---------------------------------------------------
    seen_lines = []
    for name, _, _, parser in tools:
        if not parser:
            continue
        c = counts[name]
        f = first.get(name)
        line = "%-9s GPUs %s, processes listed per run: min %s, max %s (of %d)" % (
            name, f["gpus"] if f else "?", min(c) if c else "?", max(c) if c else "?", args.procs)
        if c and min(c) < args.procs:
            line += "  <-- drops processes"
            notes.append("%s listed fewer than %d processes in some runs (min %d)"
                         % (name, args.procs, min(c)))
        seen_lines.append(line)

    g = first.get("gpuscope")
    if g:
        bad_mem = bad_sm = missing = 0
        for key, e in exp_procs.items():
            p = g["detail"].get(key)
            if not p:
                missing += 1
                continue
            if p.get("gpu_memory_bytes") != e["used_memory_bytes"]:
                bad_mem += 1
            if p.get("sm_utilization_percent") != e["sm_util"]:
                bad_sm += 1
        seen_lines.append(
            "gpuscope  values vs the scenario: %d missing, %d with other GPU memory, %d with other "
            "SM utilisation; host_info ok for %d of %d" % (missing, bad_mem, bad_sm,
                                                          g["procs_host_ok"], g["procs"]))
        if missing or bad_mem or bad_sm:
            notes.append("gpuscope's per-process values differ from the scenario's (see above)")
    st = first.get("gpustat")
    if st:
        bad = sum(1 for key, e in exp_procs.items()
                  if key in st["detail"]
                  and st["detail"][key].get("gpu_memory_usage") != e["used_memory_bytes"] // (1 << 20))
        unknown = sum(1 for p in st["detail"].values() if p.get("username") in (None, "?")
                      or p.get("command") in (None, "?"))
        seen_lines.append("gpustat   values vs the scenario: %d with other GPU memory; "
                          "%d without user or command" % (bad, unknown))
    nv = first.get("nvitop")
    if nv:
        bad_sm = sum(1 for key, e in exp_procs.items()
                     if key in nv["detail"] and nv["detail"][key]["sm"] != str(e["sm_util"]))
        seen_lines.append("nvitop    values vs the scenario: %d with other %%SM" % bad_sm)

    # --- figures ----------------------------------------------------------------
    stats = {}
    for name, _, _, _ in tools:
        sm = samples[name]
        wall = [x["wall_s"] for x in sm]
        cpu = [x["user_s"] + x["sys_s"] for x in sm]
        stats[name] = {
            "runs": len(sm),
            "wall_median_s": statistics.median(wall),
            "wall_min_s": min(wall),
            "wall_max_s": max(wall),
            "wall_p90_s": pct(wall, 0.9),
            "cpu_median_s": statistics.median(cpu),
            "user_median_s": statistics.median(x["user_s"] for x in sm),
            "sys_median_s": statistics.median(x["sys_s"] for x in sm),
            "maxrss_median_kib": statistics.median(x["maxrss_kib"] for x in sm),
            "maxrss_max_kib": max(x["maxrss_kib"] for x in sm),
        }
    gs = stats["gpuscope"]
    ratio = {n: stats[n]["wall_median_s"] / gs["wall_median_s"] for n in ("gpustat", "nvitop")}
    cpu_ratio = {n: stats[n]["cpu_median_s"] / gs["cpu_median_s"] for n in ("gpustat", "nvitop")}
    # a ratio of medians is one figure; the spread of per-round ratios tells how steady it is
    per_round = {}
    for n in ("gpustat", "nvitop"):
        per_round[n] = [a["wall_s"] / b["wall_s"]
                        for a, b in zip(samples[n], samples["gpuscope"])]

    goals = [
        ("median wall: gpustat / gpuscope >= %.0f" % GOAL_WALL_RATIO,
         "%.1f x" % ratio["gpustat"], ratio["gpustat"] >= GOAL_WALL_RATIO),
        ("median CPU (user+sys) per snapshot < %.0f ms" % (GOAL_CPU_S * 1e3),
         "%.2f ms" % (gs["cpu_median_s"] * 1e3), gs["cpu_median_s"] < GOAL_CPU_S),
        ("median peak RSS < %d MiB" % (GOAL_RSS_KIB // 1024),
         "%.2f MiB" % (gs["maxrss_median_kib"] / 1024), gs["maxrss_median_kib"] < GOAL_RSS_KIB),
    ]

    m = machine_info(args.venv)
    out = []
    p = out.append
    p("gpuscope status benchmark: %d GPUs, %d processes (fake NVML), %d interleaved rounds"
      % (args.gpus, args.procs, args.rounds))
    p("")
    p("command:  %s" % args.command)
    p("runs:     under %s (fork, exec, wait4), order rotated each round, outputs to files" %
      os.path.relpath(args.wait4run, ROOT))
    for name, argv, env, _ in tools[:3]:
        extra = "GPUSCOPE_NVML=%s" % os.path.relpath(fake_lib, ROOT) if name == "gpuscope" else \
            "LD_LIBRARY_PATH=%s" % os.path.relpath(os.path.dirname(fake_lib), ROOT)
        p("  %-9s FAKE_NVML_SCENARIO=%s %s %s" % (name, os.path.relpath(args.scenario, ROOT), extra,
                                                 " ".join(os.path.relpath(a, ROOT) if a.startswith("/")
                                                          else a for a in argv)))
    p("")
    p("machine:")
    for k in ("cpu", "cpus_online", "memory", "virtualization", "kernel", "os", "compiler",
              "gpuscope_commit", "gpuscope_version", "gpuscope_binary", "python", "python_packages", "date"):
        p("  %-17s %s" % (k, m[k]))
    p("")
    p("what each tool saw (every run checked):")
    for line in seen_lines:
        p("  " + line)
    p("")
    hdr = "%-24s %9s %9s %9s %9s %9s %9s %9s %9s" % (
        "", "wall med", "wall min", "wall max", "CPU med", "user med", "sys med", "RSS med", "RSS max")
    p(hdr)
    p("%-24s %9s %9s %9s %9s %9s %9s %9s %9s" % ("", "ms", "ms", "ms", "ms", "ms", "ms", "MiB", "MiB"))
    for name, _, _, _ in tools:
        s = stats[name]
        p("%-24s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            name, s["wall_median_s"] * 1e3, s["wall_min_s"] * 1e3, s["wall_max_s"] * 1e3,
            s["cpu_median_s"] * 1e3, s["user_median_s"] * 1e3, s["sys_median_s"] * 1e3,
            s["maxrss_median_kib"] / 1024, s["maxrss_max_kib"] / 1024))
    p("(CPU: user+sys from wait4; the kernel splits a few ms between user and sys by timer ticks,")
    p(" so only the sum is exact. RSS: ru_maxrss, which counts mapped library pages; the harness")
    p(" itself can put a floor of at most %.2f MiB under it)" % (floor / 1024))
    p("")
    for n in ("gpustat", "nvitop"):
        p("%-8s / gpuscope: median wall %6.1f x (per-round ratios: min %.1f, median %.1f, max %.1f);"
          " median CPU %6.1f x" % (n, ratio[n], min(per_round[n]), statistics.median(per_round[n]),
                                  max(per_round[n]), cpu_ratio[n]))
    v = stats["gpuscope --version"]["cpu_median_s"]
    np_ = stats["gpuscope --no-processes"]["cpu_median_s"]
    p("gpuscope CPU, medians: process start and exit (--version) %.2f ms; %d GPUs without "
      "processes %.2f ms; with %d processes %.2f ms" % (v * 1e3, args.gpus, np_ * 1e3, args.procs,
                                                         gs["cpu_median_s"] * 1e3))
    p("  so the snapshot itself costs about %.2f ms beyond starting a process, of which about "
      "%.2f ms (%.0f us a process) is the processes" % ((gs["cpu_median_s"] - v) * 1e3,
                                                          (gs["cpu_median_s"] - np_) * 1e3,
                                                          (gs["cpu_median_s"] - np_) / max(args.procs, 1) * 1e6))
    p("")
    p("goals (gpuscope; a report, not a test):")
    for text, val, ok in goals:
        p("  %-4s %-48s %s" % ("PASS" if ok else "FAIL", text, val))
    if notes or problems:
        p("")
    for n in notes:
        p("note: " + n)
    for pr in problems[:20]:
        p("PROBLEM: " + pr)
    if len(problems) > 20:
        p("PROBLEM: ... and %d more" % (len(problems) - 20))
    p("")
    p("%d runs in %.1f s; outputs in %s, samples in %s" % (
        sum(len(v) for v in samples.values()), t_total, os.path.relpath(args.outdir, ROOT),
        os.path.relpath(os.path.join(args.outdir, "results.json"), ROOT)))

    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(args.outdir, "report.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.outdir, "results.json"), "w") as f:
        json.dump({"command": args.command, "machine": m, "rounds": args.rounds,
                   "gpus": args.gpus, "procs": args.procs, "rss_floor_kib": floor,
                   "stats": stats, "ratio_wall": ratio, "ratio_cpu": cpu_ratio,
                   "goals": [{"goal": t, "value": v_, "pass": ok} for t, v_, ok in goals],
                   "notes": notes, "problems": problems, "samples": samples}, f, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
