#!/usr/bin/env python3
"""Write a fixture /proc (and the sysfs links of its GPUs) for bench_fdinfo.

    make-fixture.py DIR [--procs 2000] [--drm 20] [--min-fds 5] [--max-fds 60] [--seed 1]
                        [--e2e-sys SYSFS]

DIR/proc holds PROCS processes, each with stat, status and cmdline files and an fd directory
of MIN..MAX-FDS entries (uniform), as symbolic links shaped like a real
/proc's: mostly pipes, sockets, anon inodes, libraries and files, and
/dev/null or a tty. DRM of them also hold one to three DRM fds (render
node, sometimes the card node, sometimes a dup of the render fd) with the
fdinfo text of an amdgpu, i915 or xe client, alternating; only those
fdinfo files exist, as gpuscope reads no others. DIR/sys/dev/char has the
links of the three GPUs' nodes, DIR/manifest.json the DRM processes (driver,
card minor, number of clients), DIR/sys/class/drm their cards and render
nodes, and DIR/sys/kernel/debug/dri/<card minor>/clients DRM's list of each
GPU's open files in the format of Linux 6.13 (as root with debugfs mounted),
naming the process that opened each. DIR/sys-walk is the same sysfs without
debugfs (as for a user, or in a container), where gpuscope walks all of
/proc. The same seed writes the same tree.

With --e2e-sys (tests/fixtures/amd-dgpu/sys), DIR/e2e is a root for
`gpuscope --root`: that card's sysfs, with the debugfs list of its clients,
and DIR/proc; DIR/e2e-walk the same without debugfs. The i915 and xe
clients' devices are not in that sysfs, so gpuscope shows only the AMD GPU
and its processes, having read and parsed every client's fdinfo.
"""
import argparse
import json
import os
import random
import re
import shutil

AMDGPU = """pos:\t0
flags:\t02100002
mnt_id:\t24
ino:\t1181
drm-driver:\tamdgpu
drm-client-id:\t{cid}
drm-pdev:\t0000:03:00.0
pasid:\t{pasid}
drm-total-cpu:\t0
drm-shared-cpu:\t0
drm-active-cpu:\t0
drm-resident-cpu:\t0
drm-purgeable-cpu:\t0
drm-total-gtt:\t20 MiB
drm-shared-gtt:\t0
drm-active-gtt:\t0
drm-resident-gtt:\t20 MiB
drm-purgeable-gtt:\t0
drm-total-vram:\t155068 KiB
drm-shared-vram:\t13584 KiB
drm-active-vram:\t0
drm-resident-vram:\t155068 KiB
drm-purgeable-vram:\t0
drm-total-gds:\t0
drm-shared-gds:\t0
drm-active-gds:\t0
drm-resident-gds:\t0
drm-purgeable-gds:\t0
drm-total-gws:\t0
drm-shared-gws:\t0
drm-active-gws:\t0
drm-resident-gws:\t0
drm-purgeable-gws:\t0
drm-total-oa:\t0
drm-shared-oa:\t0
drm-active-oa:\t0
drm-resident-oa:\t0
drm-purgeable-oa:\t0
drm-total-doorbell:\t0
drm-shared-doorbell:\t0
drm-active-doorbell:\t0
drm-resident-doorbell:\t0
drm-purgeable-doorbell:\t0
drm-memory-vram:\t155068 KiB
drm-memory-gtt: \t20480 KiB
drm-memory-cpu: \t0 KiB
amd-evicted-vram:\t0 KiB
amd-requested-vram:\t155068 KiB
amd-requested-gtt:\t20480 KiB
drm-engine-gfx:\t{ns} ns
drm-engine-compute:\t{ns2} ns
"""

I915 = """pos:\t0
flags:\t02100002
mnt_id:\t26
ino:\t284
drm-driver:\ti915
drm-client-id:\t{cid}
drm-pdev:\t0000:00:02.0
drm-total-system0:\t6044 KiB
drm-shared-system0:\t0
drm-active-system0:\t0
drm-resident-system0:\t6044 KiB
drm-purgeable-system0:\t1688 KiB
drm-total-stolen-system0:\t0
drm-shared-stolen-system0:\t0
drm-active-stolen-system0:\t0
drm-resident-stolen-system0:\t0
drm-purgeable-stolen-system0:\t0
drm-engine-render:\t{ns} ns
drm-engine-copy:\t0 ns
drm-engine-video:\t{ns2} ns
drm-engine-capacity-video:\t2
drm-engine-video-enhance:\t0 ns
"""

XE = """pos:\t0
flags:\t0100002
mnt_id:\t26
ino:\t685
drm-driver:\txe
drm-client-id:\t{cid}
drm-pdev:\t0000:04:00.0
drm-total-system:\t0
drm-shared-system:\t0
drm-active-system:\t0
drm-resident-system:\t0
drm-purgeable-system:\t0
drm-total-gtt:\t192 KiB
drm-shared-gtt:\t0
drm-active-gtt:\t0
drm-resident-gtt:\t192 KiB
drm-total-vram0:\t23992 KiB
drm-shared-vram0:\t16 MiB
drm-active-vram0:\t0
drm-resident-vram0:\t23992 KiB
drm-total-stolen:\t0
drm-shared-stolen:\t0
drm-active-stolen:\t0
drm-resident-stolen:\t0
drm-cycles-rcs:\t{ns}
drm-total-cycles-rcs:\t7655183225
drm-cycles-bcs:\t0
drm-total-cycles-bcs:\t7655183225
drm-cycles-vcs:\t{ns2}
drm-total-cycles-vcs:\t7655183225
drm-engine-capacity-vcs:\t2
drm-cycles-vecs:\t0
drm-total-cycles-vecs:\t7655183225
drm-engine-capacity-vecs:\t2
drm-cycles-ccs:\t0
drm-total-cycles-ccs:\t7655183225
drm-engine-capacity-ccs:\t4
"""

# (template, card minor, render minor, sysfs device path)
DRIVER = {AMDGPU: "amdgpu", I915: "i915", XE: "xe"}
# (the AMD GPU is where tests/fixtures/amd-dgpu has its card, for --e2e-sys)
GPUS = [
    (AMDGPU, 1, 128, "pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0"),
    (I915, 2, 129, "pci0000:00/0000:00:02.0"),
    (XE, 3, 130, "pci0000:00/0000:00:1c.0/0000:04:00.0"),
]

LIBS = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libglib-2.0.so.0", "libssl.so.3",
        "libz.so.1", "libdbus-1.so.3", "libsystemd.so.0"]


def other_target(rng, pid, fd):
    r = rng.random()
    if fd == 0:
        return "/dev/null"
    if fd < 3:
        return "/dev/pts/%d" % rng.randrange(8)
    if r < 0.30:
        return "socket:[%d]" % rng.randrange(10000, 999999)
    if r < 0.50:
        return "pipe:[%d]" % rng.randrange(10000, 999999)
    if r < 0.65:
        return "anon_inode:[%s]" % rng.choice(["eventfd", "eventpoll", "timerfd", "inotify"])
    if r < 0.80:
        return "/usr/lib/x86_64-linux-gnu/" + rng.choice(LIBS)
    if r < 0.90:
        return "/home/user/.cache/app-%d/data-%d.db" % (pid, fd)
    return "/var/log/journal/system@%016x.journal" % rng.randrange(1 << 60)


STATUS = """Name:\t{comm}
Umask:\t0022
State:\tS (sleeping)
Tgid:\t{pid}
Ngid:\t0
Pid:\t{pid}
PPid:\t1
TracerPid:\t0
Uid:\t1000\t1000\t1000\t1000
Gid:\t1000\t1000\t1000\t1000
FDSize:\t64
Groups:\t1000
NStgid:\t{pid}
NSpid:\t{pid}
NSpgid:\t{pid}
NSsid:\t{pid}
VmPeak:\t  102400 kB
VmSize:\t  102400 kB
VmRSS:\t   10240 kB
RssAnon:\t    8192 kB
Threads:\t4
"""


def stat_line(pid, comm, start):
    fields = [str(pid), "(%s)" % comm, "S", "1", str(pid), str(pid), "0", "-1", "4194560",
              "120", "0", "0", "0", "250", "50", "0", "0", "20", "0", "4", "0", str(start),
              "104857600", "2560"] + ["0"] * 28
    return " ".join(fields) + "\n"


def write_clients(sysd, card, rows):
    """debugfs dri/<card>/clients as Linux 6.13 prints it."""
    dbg = os.path.join(sysd, "kernel", "debug", "dri", str(card))
    os.makedirs(dbg)
    with open(os.path.join(dbg, "clients"), "w") as f:
        f.write("%20s %5s %3s master a %5s %10s %64s %20s\n"
                % ("command", "tgid", "dev", "uid", "magic", "name", "id"))
        for comm, pid, minor, ident in rows:
            f.write("%20s %5d %3d   %c    %c %5d %10u %64s %20d\n"
                    % (comm, pid, minor, "n", "y", 1000, 0, "<unset>", ident))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--drm", type=int, default=20)
    ap.add_argument("--min-fds", type=int, default=5)
    ap.add_argument("--max-fds", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--e2e-sys")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    if os.path.exists(a.dir):
        shutil.rmtree(a.dir)
    proc = os.path.join(a.dir, "proc")
    sysd = os.path.join(a.dir, "sys")
    os.makedirs(proc)
    with open(os.path.join(proc, "uptime"), "w") as f:
        f.write("123456.78 234567.89\n")

    pids = sorted(rng.sample(range(300, 400000), a.procs))
    drm_pids = set(rng.sample(pids, a.drm))
    total_fds = drm_fds = 0
    cid = 100
    clients = {card: [] for _, card, _, _ in GPUS}  # card minor -> (comm, pid, minor, id)
    manifest = {}  # DRM pid -> its driver, card minor and number of clients (open files)
    for i, pid in enumerate(pids):
        d = os.path.join(proc, str(pid))
        os.makedirs(os.path.join(d, "fd"))
        os.makedirs(os.path.join(d, "fdinfo"))
        with open(os.path.join(d, "stat"), "w") as f:
            f.write(stat_line(pid, "proc%d" % i, 1000 + i))
        with open(os.path.join(d, "status"), "w") as f:
            f.write(STATUS.format(comm="proc%d" % i, pid=pid))
        with open(os.path.join(d, "cmdline"), "w") as f:
            f.write("/usr/bin/proc%d\0--worker\0%d\0" % (i, pid))
        nfd = rng.randint(a.min_fds, a.max_fds)
        targets = {fd: other_target(rng, pid, fd) for fd in range(nfd)}
        if pid in drm_pids:
            tmpl, card, render, _ = GPUS[len([p for p in drm_pids if p < pid]) % len(GPUS)]
            fd = rng.randrange(3, max(nfd, 1) + 3)
            texts = {fd: (render, tmpl.format(cid=cid, pasid=32000 + cid,
                                              ns=rng.randrange(10 ** 9, 10 ** 11),
                                              ns2=rng.randrange(10 ** 9)))}
            cid += 1
            if rng.random() < 0.5:  # a second client, on the card node
                texts[nfd + 3] = (card, tmpl.format(cid=cid, pasid=32000 + cid, ns=0, ns2=0))
                cid += 1
            if rng.random() < 0.3:  # a dup of the first
                texts[nfd + 4] = (render, texts[fd][1])
            manifest[pid] = {"driver": DRIVER[tmpl], "card": card,
                             "clients": len([k for k in texts if k != nfd + 4])}
            for dfd, (minor, text) in texts.items():
                if dfd != nfd + 4:  # a dup is the same open file
                    m = re.search(r"drm-client-id:\t(\d+)", text)
                    clients[card].append(("proc%d" % i, pid, minor, int(m.group(1))))
                name = "renderD%d" % minor if minor >= 128 else "card%d" % minor
                targets[dfd] = "/dev/dri/" + name
                with open(os.path.join(d, "fdinfo", str(dfd)), "w") as f:
                    f.write(text)
                drm_fds += 1
        for fd, t in targets.items():
            os.symlink(t, os.path.join(d, "fd", str(fd)))
        total_fds += len(targets)

    for _, card, render, dev in GPUS:
        for minor in (card, render):
            name = "renderD%d" % minor if minor >= 128 else "card%d" % minor
            os.makedirs(os.path.join(sysd, "devices", dev, "drm", name), exist_ok=True)
            link = os.path.join(sysd, "dev", "char", "226:%d" % minor)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink("../../devices/%s/drm/%s" % (dev, name), link)
    for _, card, render, dev in GPUS:
        drm = os.path.join(sysd, "devices", dev, "drm")
        cls = os.path.join(sysd, "class", "drm")
        os.makedirs(cls, exist_ok=True)
        for minor in (card, render):
            name = "renderD%d" % minor if minor >= 128 else "card%d" % minor
            os.symlink("../../" + os.path.relpath(drm, sysd) + "/" + name,
                       os.path.join(cls, name))
            os.symlink("../../../" + os.path.basename(dev),
                       os.path.join(drm, name, "device"))
        write_clients(sysd, card, clients[card])
    no_debug = lambda d, names: ["debug"] if d.endswith("/kernel") else []
    shutil.copytree(sysd, os.path.join(a.dir, "sys-walk"), symlinks=True, ignore=no_debug)
    if a.e2e_sys:
        e2e = os.path.join(a.dir, "e2e")
        shutil.copytree(a.e2e_sys, os.path.join(e2e, "sys"), symlinks=True)
        write_clients(os.path.join(e2e, "sys"), GPUS[0][1], clients[GPUS[0][1]])
        os.symlink("../proc", os.path.join(e2e, "proc"))
        walk = os.path.join(a.dir, "e2e-walk")
        shutil.copytree(os.path.join(e2e, "sys"), os.path.join(walk, "sys"), symlinks=True,
                        ignore=no_debug)
        os.symlink("../proc", os.path.join(walk, "proc"))
    with open(os.path.join(a.dir, "manifest.json"), "w") as f:
        json.dump({str(k): v for k, v in sorted(manifest.items())}, f, indent=1)
    print("fixture: %d processes, %d fd entries, %d of them DRM fds in %d processes"
          % (a.procs, total_fds, drm_fds, a.drm))


if __name__ == "__main__":
    main()
