#!/usr/bin/env python3
"""Turns feedback-bench's JSON report into one SVG chart, with no dependency beyond Python 3.

    swift run --package-path Benchmarks -c release feedback-bench --format json --output bench.json
    python3 Benchmarks/scripts/chart.py bench.json Benchmarks/results/benchmarks.svg

Each section is drawn only when the report holds its scenario:
- send -> observed latency percentiles per backend and the limit's own percentiles
  at 10, 50 and 90 % of each one's maximum rate (log scale), under the machine note (processors,
  allocator, load average at the start and end of the run), so that noise reads as noise;
- throughput per scenario (units per second) for the limit, each backend and the peer. Log
  scale, because the rates span several decades: the bars start at the axis's first decade, not
  at zero, and the axis says so;
- with `--scenario scaling`: ns per event as live loops (idle, active) and senders grow.

Hand-written SVG on purpose: matplotlib would be a PyPI download for three simple panels.
"""
import json
import math
import sys
from html import escape

COLORS = {"limit": "#7f7f7f", "callback": "#1f77b4", "actor": "#d62728", "opencombine": "#2ca02c"}
PERCENTILES = ["p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs"]
# (scenario, case prefix, metric, label): rows whose cost per unit becomes a rate.
THROUGHPUT_ROWS = [
    ("throughput", "1 sender", "ns/event", "send, 1 sender"),
    ("throughput", "4 senders", "ns/event", "send, 4 senders"),
    ("pingpong", "", "ns/cycle", "ping-pong cycle"),
    ("fanout", "F = 1", "ns/state", "state, F = 1"),
    ("fanout", "F = 16", "ns/state", "state, F = 16"),
    ("fanout", "F = 256", "ns/state", "state, F = 256"),
    ("cancellation", "switch-latest", "ns/cycle", "switch-latest cycle"),
    ("cancellation", "set churn", "ns/event", "set-churn event"),
    ("loops", "", "create ns/loop", "loop created"),
    ("loops", "", "stop ns/loop", "loop stopped"),
]


def find(report, scenario, prefix, metric):
    for s in report["scenarios"]:
        if s["scenario"] != scenario:
            continue
        for row in s["rows"]:
            if row["label"].startswith(prefix) and row["metric"] == metric:
                return row
    return None


def log_scale(lo, hi, size):
    lo, hi = math.log10(lo), math.log10(hi)
    return lambda v: (math.log10(max(v, 10 ** lo)) - lo) / (hi - lo) * size


def decades(lo, hi):
    return [10 ** e for e in range(int(math.floor(math.log10(lo))), int(math.ceil(math.log10(hi))) + 1)]


def fmt(v):
    return f"{v:g}" if v < 1e4 else f"1e{int(round(math.log10(v)))}"


def latency_panels(report, series, x0, y0, width, height):
    out = []
    rates = ["10 % of max", "50 % of max", "90 % of max"]
    values = [row["limit"] if s == "limit" else row["values"].get(s)
              for rate in rates for p in PERCENTILES
              for row in [find(report, "latency", rate, p)] if row for s in series]
    values = [v for v in values if v]
    if not values:
        return out
    lo, hi = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))
    panel_w = (width - 40) / 3
    y = log_scale(lo, hi, height)
    for i, rate in enumerate(rates):
        px = x0 + i * (panel_w + 20)
        out.append(f'<text x="{px + panel_w / 2}" y="{y0 - 8}" text-anchor="middle" font-weight="bold">{rate}</text>')
        out.append(f'<rect x="{px}" y="{y0}" width="{panel_w}" height="{height}" fill="none" stroke="#ccc"/>')
        for d in decades(lo, hi):
            yy = y0 + height - y(d)
            out.append(f'<line x1="{px}" x2="{px + panel_w}" y1="{yy}" y2="{yy}" stroke="#eee"/>')
            if i == 0:
                out.append(f'<text x="{px - 4}" y="{yy + 4}" text-anchor="end" font-size="10">{fmt(d)}</text>')
        step = panel_w / (len(PERCENTILES) + 1)
        for j, p in enumerate(PERCENTILES):
            out.append(f'<text x="{px + step * (j + 1)}" y="{y0 + height + 14}" text-anchor="middle" '
                       f'font-size="10">{escape(p.split()[0])}</text>')
        for s in series:
            points = []
            for j, p in enumerate(PERCENTILES):
                row = find(report, "latency", rate, p)
                v = row and (row["limit"] if s == "limit" else row["values"].get(s))
                if v:
                    points.append((px + step * (j + 1), y0 + height - y(v)))
            if points:
                out.append(f'<polyline fill="none" stroke="{COLORS.get(s, "#000")}" stroke-width="2" points="'
                           + " ".join(f"{a:.1f},{b:.1f}" for a, b in points) + '"/>')
                out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{COLORS.get(s, "#000")}"/>' for a, b in points]
    out.append(f'<text x="{x0 - 36}" y="{y0 + height / 2}" transform="rotate(-90 {x0 - 36} {y0 + height / 2})" '
               f'text-anchor="middle" font-size="11">µs from intended send (log)</text>')
    return out


def throughput_bars(report, series, x0, y0, width):
    rows = [(label, find(report, sc, prefix, metric)) for sc, prefix, metric, label in THROUGHPUT_ROWS]
    rows = [(label, row) for label, row in rows if row]
    rates = [1e9 / v for _, row in rows for s in series
             for v in [row["limit"] if s == "limit" else row["values"].get(s)] if v]
    if not rates:
        return [], 0
    lo, hi = 10 ** math.floor(math.log10(min(rates))), 10 ** math.ceil(math.log10(max(rates)))
    label_w, bar_h, gap = 150, 9, 8
    plot_w = width - label_w
    x = log_scale(lo, hi, plot_w)
    out, y = [], y0
    group_h = bar_h * len(series) + gap
    total_h = group_h * len(rows)
    for d in decades(lo, hi):
        xx = x0 + label_w + x(d)
        out.append(f'<line x1="{xx}" x2="{xx}" y1="{y0}" y2="{y0 + total_h}" stroke="#eee"/>')
        out.append(f'<text x="{xx}" y="{y0 + total_h + 14}" text-anchor="middle" font-size="10">{fmt(d)}</text>')
    for label, row in rows:
        out.append(f'<text x="{x0 + label_w - 6}" y="{y + group_h / 2}" text-anchor="end" font-size="11">{escape(label)}</text>')
        for k, s in enumerate(series):
            v = row["limit"] if s == "limit" else row["values"].get(s)
            if v:
                w = max(1.0, x(1e9 / v))
                out.append(f'<rect x="{x0 + label_w}" y="{y + k * bar_h}" width="{w:.1f}" height="{bar_h - 1}" '
                           f'fill="{COLORS.get(s, "#000")}"><title>{escape(s)}: {1e9 / v:,.0f}/s</title></rect>')
        y += group_h
    out.append(f'<text x="{x0 + label_w + plot_w / 2}" y="{y0 + total_h + 30}" text-anchor="middle" font-size="11">'
               f'units per second, higher is better; log scale (the rates span {round(math.log10(hi / lo))} decades), '
               f'so bars start at {fmt(lo)}/s, not at zero</text>')
    return out, total_h + 36


def scaling_panels(report, series, x0, y0, width, height):
    """ns per event against live loops (idle, active; log-log) and against senders."""
    scaling = next((s for s in report["scenarios"] if s["scenario"] == "scaling"), None)
    if not scaling:
        return [], 0
    groups = [("idle", "idle, ", " loop", "live loops, idle (log)"),
              ("active", "active, ", " loop", "live loops, active (log)"),
              ("senders", "", " sender", "sending threads")]
    curves = {}
    for key, prefix, suffix, _ in groups:
        for row in scaling["rows"]:
            if row["metric"] != "ns/event" or not row["label"].startswith(prefix) or suffix not in row["label"]:
                continue
            n = int(row["label"][len(prefix):].split()[0])
            for s, v in row["values"].items():
                curves.setdefault((key, s), []).append((n, v))
    values = [v for points in curves.values() for _, v in points if v > 0]
    if not values:
        return [], 0
    lo, hi = 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))
    y = log_scale(lo, hi, height)
    panel_w = (width - 40) / 3
    out = []
    for i, (key, _, _, title) in enumerate(groups):
        px = x0 + i * (panel_w + 20)
        ns = sorted({n for (k, _), points in curves.items() if k == key for n, _ in points})
        if not ns:
            continue
        logx = key != "senders"
        if logx:
            x = log_scale(max(1, min(ns)), max(10, max(ns)), panel_w - 20)
        else:
            x = lambda n: (n - min(ns)) / max(1, max(ns) - min(ns)) * (panel_w - 20)
        out.append(f'<text x="{px + panel_w / 2}" y="{y0 + height + 28}" text-anchor="middle" font-size="11">{title}</text>')
        out.append(f'<rect x="{px}" y="{y0}" width="{panel_w}" height="{height}" fill="none" stroke="#ccc"/>')
        for d in decades(lo, hi):
            yy = y0 + height - y(d)
            out.append(f'<line x1="{px}" x2="{px + panel_w}" y1="{yy}" y2="{yy}" stroke="#eee"/>')
            if i == 0:
                out.append(f'<text x="{px - 4}" y="{yy + 4}" text-anchor="end" font-size="10">{fmt(d)}</text>')
        for n in ns:
            out.append(f'<text x="{px + 10 + x(n):.1f}" y="{y0 + height + 14}" text-anchor="middle" font-size="10">{fmt(n)}</text>')
        for s in series:
            points = sorted(curves.get((key, s), []))
            if not points:
                continue
            xy = [(px + 10 + x(n), y0 + height - y(v)) for n, v in points]
            out.append(f'<polyline fill="none" stroke="{COLORS.get(s, "#000")}" stroke-width="2" points="'
                       + " ".join(f"{a:.1f},{b:.1f}" for a, b in xy) + '"/>')
            out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{COLORS.get(s, "#000")}"/>' for a, b in xy]
    out.append(f'<text x="{x0 - 36}" y="{y0 + height / 2}" transform="rotate(-90 {x0 - 36} {y0 + height / 2})" '
               f'text-anchor="middle" font-size="11">ns per event (log)</text>')
    return out, height + 40


def machine_note(report):
    note = f'{report["processors"]} processors, {report["size"]["events"]:,} events'
    if report.get("allocator"):
        note += f', allocator {report["allocator"]}'
    load = report.get("loadAverage")
    if load:
        note += ", load average " + " → ".join(f"{v:.1f}" for v in load) + " during the run"
        if max(load) > report["processors"]:
            note += f' (more runnable work than {report["processors"]} cores: tails above a few µs include preemption)'
    return note


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: chart.py REPORT.json OUTPUT.svg")
    with open(sys.argv[1]) as f:
        report = json.load(f)
    series = ["limit"] + report["backends"]
    width = 900
    parts = [f'<text x="20" y="24" font-size="15" font-weight="bold">FeedbackLoop benchmarks, {escape(report["date"])}</text>',
             f'<text x="20" y="42" font-size="11">{escape(machine_note(report))}</text>']
    y = 70
    latency = latency_panels(report, series, 70, y + 28, width - 90, 200)
    if latency:
        parts.append(f'<text x="20" y="{y}" font-weight="bold">Send → observed latency percentiles (open loop, '
                     'background loops carrying load; the limit\'s own percentiles in grey)</text>')
        parts += latency
        y += 28 + 200 + 40
    bars, bars_h = throughput_bars(report, series, 20, y + 15, width - 40)
    if bars:
        parts.append(f'<text x="20" y="{y}" font-weight="bold">Throughput per scenario</text>')
        parts += bars
        y += 15 + bars_h + 20
    scaling, scaling_h = scaling_panels(report, series, 70, y + 15, width - 90, 180)
    if scaling:
        parts.append(f'<text x="20" y="{y}" font-weight="bold">Scaling: cost per event as loops and senders grow</text>')
        parts += scaling
        y += 15 + scaling_h + 10
    drawn = [s for s in series if any(f'stroke="{COLORS.get(s, "#000")}"' in p or f'fill="{COLORS.get(s, "#000")}"' in p
                                      for p in latency + bars + scaling)]
    for k, s in enumerate(drawn):
        parts.append(f'<rect x="{20 + k * 140}" y="{y}" width="12" height="12" fill="{COLORS.get(s, "#000")}"/>')
        parts.append(f'<text x="{38 + k * 140}" y="{y + 11}" font-size="12">{escape(s)}</text>')
    height = y + 30
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>'
           + "\n".join(parts) + "</svg>\n")
    with open(sys.argv[2], "w") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
