#!/usr/bin/env python3
"""bench/report.py RESULTS.jsonl OUTDIR — the side-by-side table (table.md) and the
latency-versus-load chart script (latency.gp -> latency.png) of one bench/run invocation.
Each line's "run" (1…N; 1 when absent) says which repetition it belongs to: every figure is the
median (min–max) over the runs, and the Weir/nchan and Weir/ceiling ratios divide medians."""
import argparse
import json
import os
import platform
import statistics


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def machine():
    cpu = "unknown CPU"
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
            mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, Linux {platform.release()}"


def ratio(a, b):
    if not a or not b:
        return "—"
    return f"{a / b:.2f}×"


def median(vals):
    return statistics.median(vals) if vals else None


def spread(vals, spec, unit=""):
    """'median (min–max)' of the runs' figures; one run's figure alone."""
    if not vals:
        return "—"
    if len(vals) == 1:
        return f"{vals[0]:{spec}}{unit}"
    return f"{statistics.median(vals):{spec}}{unit} ({min(vals):{spec}}–{max(vals):{spec}})"


def by_run(rows):
    runs = {}
    for r in rows:
        runs.setdefault(r.get("run", 1), []).append(r)
    return [runs[k] for k in sorted(runs)]


def by_rate(steps):
    """Steps grouped by offered rate, fixed rates ascending, the closed-loop step (0) last."""
    rates = {}
    for r in steps:
        rates.setdefault(r["rate_offered"], []).append(r)
    return sorted(rates.items(), key=lambda kv: (kv[0] == 0, kv[0]))


def fanout_summary(steps):
    """Saturation: the peak delivered frames/s, and the write rate of the as-fast-as-the-server-
    takes-them step (closed loop on delivery). The latency figure is the p99 of the fastest
    fixed-rate step at or below half that write rate."""
    if not steps:
        return None
    # Peak: the best delivered frames/s of any step. The closed-loop step usually gives it, but
    # not always (nchan's varies run to run), so every step counts.
    best = max(steps, key=lambda r: r["frames_per_s"])
    top = [r for r in steps if r["rate_offered"] == 0]
    sat_rate = (top[-1] if top else best)["writes_per_s"]
    fixed = [r for r in steps if r["rate_offered"] > 0 and r["writes_per_s"] <= sat_rate / 2 * 1.05]
    half = max(fixed, key=lambda r: r["writes_per_s"]) if fixed else None
    ok = all(r["lost"] == 0 and r["out_of_order"] == 0 and r["gaps"] == 0 for r in steps)
    return {"frames_per_s": best["frames_per_s"], "sat_writes": sat_rate,
            "half": half, "ok": ok}


def fanout_runs(steps):
    """fanout_summary per run. The half-saturation step is picked by the same rule from the
    medians: the fastest fixed rate whose median writes/s is at or below half the median
    saturation write rate; its p99 is given over the runs."""
    if not steps:
        return None
    runs = [fanout_summary(rs) for rs in by_run(steps)]
    sat = median([s["sat_writes"] for s in runs])
    half = None
    for rate, rs in by_rate(steps):
        w = median([r["writes_per_s"] for r in rs])
        if rate > 0 and w <= sat / 2 * 1.05 and (not half or w > half["writes_per_s"]):
            half = {"rate": rate, "writes_per_s": w,
                    "p99": [r["latency_ms"]["p99"] for r in rs]}
    peaks = [s["frames_per_s"] for s in runs]
    return {"peaks": peaks, "peak": median(peaks), "half": half,
            "ok": all(s["ok"] for s in runs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--fd-limit", default="?")
    ap.add_argument("--seconds", default="?")
    ap.add_argument("--mode", default="full")
    a = ap.parse_args()
    rows = load(a.results)
    n_runs = len({r.get("run", 1) for r in rows})
    lines = [f"# bench/run ({a.mode}, {n_runs} run{'s' if n_runs != 1 else ''}) — {machine()}", "",
             f"Open-file limit {a.fd_limit}; the whole set took {a.seconds} s. Server pinned to "
             "CPU 0, weir_load to CPU 1.", ""]
    if n_runs > 1:
        both = len({r["server"] for r in rows}) > 1
        lines += [f"Every figure is the median (min–max) of {n_runs} runs, each on a fresh server"
                  + (", the servers' steps interleaved; Weir/nchan and Weir/ceiling ratios "
                     "divide the medians."
                     if both else "."), ""]
    errors = [r for r in rows if "error" in r]
    for r in errors:
        lines += [f"**Failed:** run {r.get('run', 1)}, {r['workload']} {r['server']} "
                  f"{r['transport']} {r['subscribers']} subscribers: {r['error']}", ""]

    fan = {}
    for r in rows:
        if r.get("workload") == "fanout" and "frames_per_s" in r:
            fan.setdefault((r["transport"], r["subscribers"], r["server"]), []).append(r)
    if fan:
        lines += ["## Fan-out (1 query key, ~150-byte records)", "",
                  "| transport | subscribers | Weir frames/s | nchan frames/s | ceiling frames/s | "
                  "Weir/nchan | Weir/ceiling | "
                  "Weir p99 @ half sat. | nchan p99 @ half sat. | nchan p99 @ Weir's half-sat. rate | "
                  "ceiling p99 @ Weir's half-sat. rate | nothing lost/reordered |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for (t, n) in sorted({(k[0], k[1]) for k in fan}):
            w = fanout_runs(fan.get((t, n, "weir"), []))
            c = fanout_runs(fan.get((t, n, "nchan"), []))
            x = fanout_runs(fan.get((t, n, "ceiling"), []))

            def peak(s):
                return spread(s["peaks"], ",.0f") if s else "—"

            def p99(s):
                if not s or not s["half"]:
                    return "—"
                h = s["half"]
                return f"{spread(h['p99'], '.1f', ' ms')} @ {h['writes_per_s']:.0f} w/s"
            def at_weirs_half(peer="nchan"):
                # The target compares the servers at one rate: half of Weir's saturation.
                if not w or not w["half"] or not fan.get((t, n, peer)):
                    return "—"
                rs = dict(by_rate(fan.get((t, n, peer), []))).get(w["half"]["rate"])
                if not rs:
                    return "—"
                return (f"{spread([r['latency_ms']['p99'] for r in rs], '.1f', ' ms')} @ "
                        f"{median([r['writes_per_s'] for r in rs]):.0f} w/s")
            ok = all(not s or s["ok"] for s in (w, c, x))
            lines.append(f"| {t} | {n} | {peak(w)} | {peak(c)} | {peak(x)} | "
                         f"{ratio(w and w['peak'], c and c['peak'])} | "
                         f"{ratio(w and w['peak'], x and x['peak'])} | {p99(w)} | {p99(c)} | "
                         f"{at_weirs_half()} | {at_weirs_half('ceiling')} | "
                         f"{'yes' if ok else 'NO'} |")
        lines.append("")

    idle = {}
    for r in rows:
        if r.get("workload") == "idle" and "connected" in r:
            idle.setdefault(r["server"], []).append(r)
    if idle:
        lines += ["## Idle WebSocket connections, one subscription each", "",
                  "| server | connected | server RSS/conn | kernel TCP mem/conn | server RSS |",
                  "|---|---|---|---|---|"]
        for s in ("weir", "nchan", "ceiling"):
            if s in idle:
                rs = idle[s]
                lines.append(f"| {s} | {spread([r['connected'] for r in rs], ',.0f')} | "
                             f"{spread([r['server_rss_bytes_per_conn'] for r in rs], ',.0f', ' B')} | "
                             f"{spread([r['tcp_mem_bytes_per_conn'] for r in rs], ',.0f', ' B')} | "
                             f"{spread([r['server_rss_mib'] for r in rs], '.1f', ' MiB')} |")
        if "weir" in idle and "nchan" in idle:
            lines.append("")
            lines.append("Weir/nchan RSS per connection (medians): " + ratio(
                median([r["server_rss_bytes_per_conn"] for r in idle["weir"]]),
                median([r["server_rss_bytes_per_conn"] for r in idle["nchan"]])))
        lines.append("")

    def grouped(workload, field):
        """Rows of one workload grouped by (transport, subscribers, keys), in order of appearance."""
        out = {}
        for r in rows:
            if r.get("workload") == workload and field in r:
                out.setdefault((r["transport"], r["subscribers"], r["keys"]), []).append(r)
        return out

    many = grouped("manykeys", "frames_per_s")
    storm = grouped("storm", "all_ready_s")
    if many or storm:
        lines += ["## Weir only: many keys and connect storm", ""]
        for (t, n, k), steps in many.items():
            for rate, rs in by_rate(steps):
                lines.append(
                    f"- many keys, {t}, {n:,} subscribers over {k:,} keys, rate {rate or 'max'}: "
                    f"{spread([r['writes_per_s'] for r in rs], ',.0f')} writes/s, "
                    f"{spread([r['frames_per_s'] for r in rs], ',.0f')} frames/s, "
                    f"p99 {spread([r['latency_ms']['p99'] for r in rs], '.1f', ' ms')}, "
                    f"lost {sum(r['lost'] for r in rs)}, "
                    f"out of order {sum(r['out_of_order'] for r in rs)}")
        for (t, n, k), rs in storm.items():
            lines.append(
                f"- storm, {t}: {spread([r['ready'] for r in rs], ',.0f')} clients connected and "
                f"had their snapshot after {spread([r['all_ready_s'] for r in rs], '.2f', ' s')} "
                f"(p50 {spread([r['ready_ms']['p50'] for r in rs], '.0f', ' ms')}, "
                f"p99 {spread([r['ready_ms']['p99'] for r in rs], '.0f', ' ms')})"
                + (f"; all leaving at once cost the server "
                   f"{spread([r['disconnect_server_cpu_s'] for r in rs], '.3f', ' s')} of CPU"
                   + (f" (user {spread([r['disconnect_server_user_s'] for r in rs], '.2f', ' s')}, "
                      f"system {spread([r['disconnect_server_system_s'] for r in rs], '.2f', ' s')})"
                      if all('disconnect_server_user_s' in r for r in rs) else "")
                   if all('disconnect_server_cpu_s' in r for r in rs) else ""))
        lines.append("")

    lines += ["## Every step", "",
              "Lost and ooo are totals over the runs; runs counts the runs that reached the step "
              "(weir_load skips fixed rates past saturation).", "",
              "| workload | server | transport | subs | keys | offered w/s | runs | writes/s | "
              "frames/s | p50 ms | p99 ms | p99.9 ms | max ms | lost | ooo | server CPU % | "
              "client CPU % |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    steps = {}
    for r in rows:
        if "frames_per_s" in r:
            steps.setdefault((r["workload"], r["server"], r["transport"], r["subscribers"],
                              r["keys"]), []).append(r)
    for (wl, s, t, n, k), rs_all in steps.items():
        for rate, rs in by_rate(rs_all):
            def col(f, spec):
                return spread([f(r) for r in rs], spec)
            lines.append(
                f"| {wl} | {s} | {t} | {n} | {k} | {rate or 'max'} | {len(rs)} | "
                f"{col(lambda r: r['writes_per_s'], ',.0f')} | "
                f"{col(lambda r: r['frames_per_s'], ',.0f')} | "
                f"{col(lambda r: r['latency_ms']['p50'], '.2f')} | "
                f"{col(lambda r: r['latency_ms']['p99'], '.2f')} | "
                f"{col(lambda r: r['latency_ms']['p999'], '.2f')} | "
                f"{col(lambda r: r['latency_ms']['max'], '.1f')} | "
                f"{sum(r['lost'] for r in rs)} | {sum(r['out_of_order'] for r in rs)} | "
                f"{col(lambda r: r['server_cpu_pct'], '.0f')} | "
                f"{col(lambda r: r['client_cpu_pct'], '.0f')} |")
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # Chart: p99 latency against delivered frames/s, one line per fan-out series, one point per
    # offered rate (the medians over the runs).
    series = []
    for key in sorted(fan):
        t, n, s = key
        name = f"{s}-{t}-{n}"
        path = os.path.join(a.out, f"{name}.dat")
        points = sorted((median([r["frames_per_s"] for r in rs]),
                         median([r["latency_ms"]["p99"] for r in rs])) for _, rs in by_rate(fan[key]))
        with open(path, "w") as f:
            for fps, p99 in points:
                f.write(f"{fps:.0f} {max(p99, 0.001):.3f}\n")
        series.append((path, f"{s} {t} {n:,} subs"))
    if series:
        gp = [
            "set terminal png size 1100,650 noenhanced",
            f"set output '{os.path.join(a.out, 'latency.png')}'",
            "set title 'Fan-out: median p99 write-to-receipt latency vs delivered frames/s "
            "(Weir, nchan and the ceiling)'",
            "set xlabel 'delivered frames/s'", "set ylabel 'p99 latency (ms, log)'",
            "set logscale y", "set grid", "set key outside right",
        ]
        plots = [f"'{p}' using 1:2 with linespoints title '{t}'" for p, t in series]
        gp.append("plot " + ", ".join(plots))
        with open(os.path.join(a.out, "latency.gp"), "w") as f:
            f.write("\n".join(gp) + "\n")


if __name__ == "__main__":
    main()
