#!/usr/bin/env python3
"""bench/report.py RESULTS.jsonl OUTDIR — the side-by-side table (table.md) and the
latency-versus-load chart script (latency.gp -> latency.png) of one bench/run invocation."""
import argparse
import json
import os
import platform


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--fd-limit", default="?")
    ap.add_argument("--seconds", default="?")
    ap.add_argument("--mode", default="full")
    a = ap.parse_args()
    rows = load(a.results)
    lines = [f"# bench/run ({a.mode}) — {machine()}", "",
             f"Open-file limit {a.fd_limit}; the whole set took {a.seconds} s. Server pinned to "
             "CPU 0, weir_load to CPU 1.", ""]

    fan = {}
    for r in rows:
        if r.get("workload") == "fanout" and "frames_per_s" in r:
            fan.setdefault((r["transport"], r["subscribers"], r["server"]), []).append(r)
    if fan:
        lines += ["## Fan-out (1 query key, ~150-byte records)", "",
                  "| transport | subscribers | Weir frames/s | nchan frames/s | Weir/nchan | "
                  "Weir p99 @ half sat. | nchan p99 @ half sat. | nothing lost/reordered |",
                  "|---|---|---|---|---|---|---|---|"]
        for (t, n) in sorted({(k[0], k[1]) for k in fan}):
            w = fanout_summary(fan.get((t, n, "weir"), []))
            c = fanout_summary(fan.get((t, n, "nchan"), []))

            def p99(s):
                if not s or not s["half"]:
                    return "—"
                h = s["half"]
                return f"{h['latency_ms']['p99']:.1f} ms @ {h['writes_per_s']:.0f} w/s"
            lines.append(
                f"| {t} | {n} | {w['frames_per_s']:,.0f} | " if w else f"| {t} | {n} | — | ")
            lines[-1] += (f"{c['frames_per_s']:,.0f} | " if c else "— | ")
            lines[-1] += (f"{ratio(w and w['frames_per_s'], c and c['frames_per_s'])} | "
                          f"{p99(w)} | {p99(c)} | "
                          f"{'yes' if (not w or w['ok']) and (not c or c['ok']) else 'NO'} |")
        lines.append("")

    idle = {r["server"]: r for r in rows if r.get("workload") == "idle" and "connected" in r}
    if idle:
        lines += ["## Idle WebSocket connections, one subscription each", "",
                  "| server | connected | server RSS/conn | kernel TCP mem/conn | server RSS |",
                  "|---|---|---|---|---|"]
        for s in ("weir", "nchan"):
            if s in idle:
                r = idle[s]
                lines.append(f"| {s} | {r['connected']:,} | {r['server_rss_bytes_per_conn']:,.0f} B | "
                             f"{r['tcp_mem_bytes_per_conn']:,.0f} B | {r['server_rss_mib']:.1f} MiB |")
        if "weir" in idle and "nchan" in idle:
            lines.append("")
            lines.append("Weir/nchan RSS per connection: " + ratio(
                idle["weir"]["server_rss_bytes_per_conn"], idle["nchan"]["server_rss_bytes_per_conn"]))
        lines.append("")

    many = [r for r in rows if r.get("workload") == "manykeys" and "frames_per_s" in r]
    storm = [r for r in rows if r.get("workload") == "storm" and "all_ready_s" in r]
    if many or storm:
        lines += ["## Weir only: many keys and connect storm", ""]
        for r in many:
            lines.append(f"- many keys, {r['transport']}, {r['subscribers']:,} subscribers over "
                         f"{r['keys']:,} keys, rate {r['rate_offered'] or 'max'}: "
                         f"{r['writes_per_s']:,.0f} writes/s, {r['frames_per_s']:,.0f} frames/s, "
                         f"p99 {r['latency_ms']['p99']:.1f} ms, lost {r['lost']}, "
                         f"out of order {r['out_of_order']}")
        for r in storm:
            lines.append(f"- storm, {r['transport']}: {r['ready']:,} clients connected and had "
                         f"their snapshot after {r['all_ready_s']:.2f} s (p50 {r['ready_ms']['p50']:.0f} ms, "
                         f"p99 {r['ready_ms']['p99']:.0f} ms)")
        lines.append("")

    lines += ["## Every step", "",
              "| workload | server | transport | subs | keys | offered w/s | writes/s | frames/s | "
              "p50 ms | p99 ms | p99.9 ms | max ms | lost | ooo | server CPU % | client CPU % |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "frames_per_s" not in r:
            continue
        l = r["latency_ms"]
        lines.append(f"| {r['workload']} | {r['server']} | {r['transport']} | {r['subscribers']} | "
                     f"{r['keys']} | {r['rate_offered'] or 'max'} | {r['writes_per_s']:,.0f} | "
                     f"{r['frames_per_s']:,.0f} | {l['p50']:.2f} | {l['p99']:.2f} | {l['p999']:.2f} | "
                     f"{l['max']:.1f} | {r['lost']} | {r['out_of_order']} | {r['server_cpu_pct']:.0f} | "
                     f"{r['client_cpu_pct']:.0f} |")
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # Chart: p99 latency against delivered frames/s, one line per fan-out series.
    series = []
    for key in sorted(fan):
        t, n, s = key
        name = f"{s}-{t}-{n}"
        path = os.path.join(a.out, f"{name}.dat")
        with open(path, "w") as f:
            for r in sorted(fan[key], key=lambda r: r["frames_per_s"]):
                f.write(f"{r['frames_per_s']:.0f} {max(r['latency_ms']['p99'], 0.001):.3f}\n")
        series.append((path, f"{s} {t} {n:,} subs"))
    if series:
        gp = [
            "set terminal png size 1100,650 noenhanced",
            f"set output '{os.path.join(a.out, 'latency.png')}'",
            "set title 'Fan-out: p99 write-to-receipt latency vs delivered frames/s (Weir and nchan)'",
            "set xlabel 'delivered frames/s'", "set ylabel 'p99 latency (ms, log)'",
            "set logscale y", "set grid", "set key outside right",
        ]
        plots = [f"'{p}' using 1:2 with linespoints title '{t}'" for p, t in series]
        gp.append("plot " + ", ".join(plots))
        with open(os.path.join(a.out, "latency.gp"), "w") as f:
            f.write("\n".join(gp) + "\n")


if __name__ == "__main__":
    main()
