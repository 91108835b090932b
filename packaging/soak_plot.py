#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plot a soak run's samples (packaging/soak.sh) and print its figures.

The CSV has one row per sample: elapsed_s, rss_kib, threads, fds, anon_huge_kib (transparent huge pages
in the resident memory) and rss_anon_kib, rss_file_kib, rss_shmem_kib (the resident memory split as
/proc/PID/status splits it), and big_kib, glibc_arenas_kib, glibc_heap_kib, other_anon_kib (the anonymous
part by allocator, packaging/soak_maps.py); older CSVs lack some of the columns after fds. The figures
compare the run after its first 5 minutes (the warm-up: the model loaded, the 1 GB file indexed once, the
caches filled) with the sample at 5 minutes: resident memory's maximum and last value and their growth
in %, threads and open file descriptors at 5 minutes, their lowest value in the last cycle of the workload
and at the end. The goal of issue 33:
growth under 5 %, threads and descriptors back to their 5-minute values, no panic.

Each workload cycle drops the 1 GB file's game list and builds it again, so resident memory swings within a
cycle by the list's size, and one sample (the one at 5 minutes) can fall anywhere in that swing. The
figures therefore also give the envelope: the maximum of each full cycle (3-minute windows from the
baseline on), the last one's growth against the first one's, the slope of a line through them, and the
largest swing within a cycle; the goal is judged both ways.
"""

import argparse
import csv
import sys

WARM_UP_S = 300
CYCLE_S = 180  # crates/app/src/app/soak.rs CYCLE


def read(path):
    rows = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows.append({k: int(v) for k, v in row.items()})
    return rows


def figures(rows):
    """The summary figures as (name, value) pairs, and whether the goal is met."""
    after = [r for r in rows if r["elapsed_s"] >= WARM_UP_S]
    if not after:
        # A short run: the first sample stands for the warm-up's end.
        after = rows
    base, end = after[0], after[-1]
    last_cycle = [r for r in after if r["elapsed_s"] >= end["elapsed_s"] - CYCLE_S]
    mib = lambda kib: kib / 1024.0
    rss_max = max(r["rss_kib"] for r in after)
    growth_max = 100.0 * (rss_max - base["rss_kib"]) / base["rss_kib"]
    growth_end = 100.0 * (end["rss_kib"] - base["rss_kib"]) / base["rss_kib"]
    out = [
        ("samples", f"{len(rows)} over {rows[-1]['elapsed_s'] / 60:.1f} min"),
        ("baseline sample at", f"{base['elapsed_s']} s"),
        ("RSS at baseline", f"{mib(base['rss_kib']):.1f} MiB"),
        ("RSS max after baseline", f"{mib(rss_max):.1f} MiB (+{growth_max:.1f} %)"),
        ("RSS at end", f"{mib(end['rss_kib']):.1f} MiB ({growth_end:+.1f} %)"),
        ("RSS max over the whole run", f"{mib(max(r['rss_kib'] for r in rows)):.1f} MiB"),
    ]
    if "anon_huge_kib" in end:
        # Transparent huge pages in the resident memory (a CSV of an older soak.sh has no such column).
        out.append(("transparent huge pages at end", f"{mib(end['anon_huge_kib']):.1f} MiB"))
    # Which part of the resident memory grew: anonymous (the heap), file-backed or shared; and the anonymous
    # part by allocator (packaging/soak_maps.py). Older CSVs lack these columns.
    top = max(after, key=lambda r: r["rss_kib"])
    parts = lambda r, keys: "/".join(f"{mib(r[k]):.1f}" for k in keys) + " MiB"
    splits = [
        ("RSS anon/file/shmem", ("rss_anon_kib", "rss_file_kib", "rss_shmem_kib"), ("baseline", "the max", "end")),
        ("mimalloc/glibc arenas/glibc heap/other", ("big_kib", "glibc_arenas_kib", "glibc_heap_kib", "other_anon_kib"),
         ("baseline", "end")),
    ]
    at = {"baseline": base, "the max": top, "end": end}
    for name, keys, when in splits:
        if keys[0] in end:
            out.extend((f"{name} at {w}", parts(at[w], keys)) for w in when)
    if "glibc_arenas_kib" in end:
        out.append(("glibc arenas max after baseline", f"{mib(max(r['glibc_arenas_kib'] for r in after)):.1f} MiB"))
    # The envelope: resident memory's high in each workload cycle after the warm-up. One cycle drops the
    # 1 GB file's game list and builds it again, so a single sample can fall anywhere in that swing; the
    # highs say whether the level itself rises (the last full cycle's high against the first's, and the
    # slope of a line through all of them).
    highs = cycle_highs(after, base["elapsed_s"], end["elapsed_s"])
    if len(highs) >= 2:
        first, last = highs[0], highs[-1]
        slope = fit_slope([(i * CYCLE_S / 3600.0, h) for i, h in enumerate(highs)])
        out += [
            ("RSS high per cycle after baseline", " ".join(f"{mib(h):.0f}" for h in highs) + " MiB"),
            ("last cycle's high against the first's", f"{100.0 * (last - first) / first:+.1f} %"),
            ("trend of the highs", f"{100.0 * slope / first:+.1f} % per hour"),
            ("swing within a cycle (max high - min low)", f"{mib(cycle_swing(after, base['elapsed_s'], end['elapsed_s'])):.0f} MiB"),
        ]
    ok = growth_max < 5.0
    envelope_ok = len(highs) >= 2 and highs[-1] < 1.05 * highs[0]
    for key, name in (("threads", "threads"), ("fds", "file descriptors")):
        b, e = base[key], end[key]
        low = min(r[key] for r in last_cycle)
        high = max(r[key] for r in after)
        out.append((name, f"baseline {b}, end {e}, lowest in the last cycle {low}, max after baseline {high}"))
        ok = ok and low <= b
        envelope_ok = envelope_ok and low <= b
    return out, ok, envelope_ok


def cycles(rows, start_s, end_s):
    """The samples of each full workload cycle from `start_s` on (a cycle cut off by the end is left out)."""
    out = []
    t = start_s
    while t + CYCLE_S <= end_s + 1:
        window = [r for r in rows if t <= r["elapsed_s"] < t + CYCLE_S]
        if window:
            out.append(window)
        t += CYCLE_S
    return out


def cycle_highs(rows, start_s, end_s):
    """Resident memory's maximum in each full cycle (KiB)."""
    return [max(r["rss_kib"] for r in c) for c in cycles(rows, start_s, end_s)]


def cycle_swing(rows, start_s, end_s):
    """The largest difference between a cycle's maximum and minimum resident memory (KiB)."""
    return max((max(r["rss_kib"] for r in c) - min(r["rss_kib"] for r in c) for c in cycles(rows, start_s, end_s)),
               default=0)


def fit_slope(points):
    """The least-squares slope of y over x through `points`."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def plot(rows, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [r["elapsed_s"] / 60.0 for r in rows]
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(10, 8))
    series = [
        ("rss_kib", "resident memory (MiB)", lambda v: v / 1024.0),
        ("threads", "threads", lambda v: v),
        ("fds", "open file descriptors", lambda v: v),
    ]
    after = [r for r in rows if r["elapsed_s"] >= WARM_UP_S] or rows
    for ax, (key, label, f) in zip(axes, series):
        ax.plot(minutes, [f(r[key]) for r in rows], linewidth=1)
        ax.set_ylabel(label)
        ax.axvline(WARM_UP_S / 60.0, color="grey", linestyle=":", linewidth=1)
        ax.grid(True, alpha=0.3)
        if key == "rss_kib":
            if "rss_anon_kib" in rows[-1]:
                ax.plot(minutes, [f(r["rss_anon_kib"]) for r in rows], linewidth=1, label="anonymous")
                ax.plot(minutes, [f(r["rss_file_kib"]) for r in rows], linewidth=1, label="file-backed")
            base = f(after[0][key])
            ax.axhline(base, color="green", linestyle="--", linewidth=1, label="at 5 min")
            ax.axhline(base * 1.05, color="red", linestyle="--", linewidth=1, label="+5 %")
            # The envelope: each full cycle's high, at the time it was sampled, and +5 % over the first.
            windows = cycles(after, after[0]["elapsed_s"], after[-1]["elapsed_s"])
            tops = [max(c, key=lambda r: r[key]) for c in windows]
            if tops:
                ax.plot([r["elapsed_s"] / 60.0 for r in tops], [f(r[key]) for r in tops], "o", markersize=3,
                        color="black", label="cycle highs")
                ax.axhline(f(tops[0][key]) * 1.05, color="orange", linestyle=":", linewidth=1,
                           label="+5 % over the first high")
            ax.legend(loc="lower right")
        else:
            ax.axhline(after[0][key], color="green", linestyle="--", linewidth=1)
    axes[-1].set_xlabel("minutes")
    axes[0].set_title("mavboard soak (packaging/soak.sh): samples every 10 s")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("png")
    p.add_argument("--panics", type=int, default=0, help="'panicked' lines in the app's log")
    p.add_argument("--reports", type=int, default=0, help="panic reports in the log folder")
    p.add_argument("--exit-status", type=int, default=0)
    p.add_argument("--cycles", type=int, default=0, help="workload cycles begun after the first")
    p.add_argument("--app-errors", type=int, default=0, help="error messages the app showed")
    a = p.parse_args()
    rows = read(a.csv)
    if not rows:
        print("no samples", file=sys.stderr)
        return 1
    plot(rows, a.png)
    out, ok, envelope_ok = figures(rows)
    out += [
        ("workload cycles", f"{a.cycles + 1}"),
        ("error messages the app showed", f"{a.app_errors}"),
        ("panics in the log", f"{a.panics} ({a.reports} crash reports)"),
        ("app exit status", f"{a.exit_status}"),
    ]
    clean = a.panics == 0 and a.reports == 0 and a.exit_status == 0
    out += [
        ("goal met (max against the 5-minute sample)", "yes" if ok and clean else "no"),
        ("goal met (last cycle's high against the first's)", "yes" if envelope_ok and clean else "no"),
    ]
    width = max(len(k) for k, _ in out)
    for k, v in out:
        print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
