#!/usr/bin/env python3
"""Where nvitop-exporter's scrape time goes: its collection pass against one
scrape's rendering, each timed alone in one process (CPU time).

    FAKE_NVML_SCENARIO=SCN LD_LIBRARY_PATH=build/fakenvml/current \\
        build/bench-serve-venv/bin/python bench/nvitop-exporter-cost.py

Run with the Python of bench/serve.sh's venv (nvitop-exporter 1.7.2,
prometheus_client 0.26.0) on the scenario of bench/serve.sh. nvitop-exporter
collects on a timer loop in its own thread (PrometheusExporter.collect():
update_host(), update_device() for every GPU, then sleep until the next
interval) and sets prometheus_client gauges; a scrape runs
prometheus_client's generate_latest() over the registry, which formats every
sample in Python on every request. This times one collection pass (the body
of that loop) and one generate_latest(), medians of several, and prints the
size of the body and its samples. A comparator's measurement only: nothing of
it is in gpuscope.
"""

import time

from nvitop import Device
from nvitop_exporter.exporter import PrometheusExporter
from prometheus_client import generate_latest


def median(f, n):
    t = []
    for _ in range(n):
        t0 = time.process_time()
        out = f()
        t.append(time.process_time() - t0)
    t.sort()
    return t[n // 2], out


def main():
    devices = Device.all()
    exp = PrometheusExporter(devices, hostname="bench", interval=1.0)

    def update():
        exp.update_host()
        for d in devices:
            exp.update_device(d)

    update()  # the first pass creates every labelled child
    upd, _ = median(update, 5)
    render, body = median(lambda: generate_latest(exp.registry), 21)
    samples = sum(1 for line in body.decode().splitlines() if line and not line.startswith("#"))
    print("nvitop-exporter, %d GPUs" % len(devices))
    print("collection pass (in its own thread, once an interval): %.1f ms CPU (median of 5)"
          % (upd * 1e3))
    print("one scrape's generate_latest(): %.1f ms CPU (median of 21), %d bytes, %d samples, "
          "%.1f us a sample" % (render * 1e3, len(body), samples, render / samples * 1e6))


if __name__ == "__main__":
    main()
