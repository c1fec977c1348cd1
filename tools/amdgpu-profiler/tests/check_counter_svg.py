#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Copyright 2026 The amdgpu profiler series authors
"""Check amdgpu-spm-dump's --counter-svg chart against its --counters CSV.

Usage: check_counter_svg.py CHART.svg COUNTERS.csv [MAX_POINTS]

The chart has a panel (<g class="counter-panel" data-counter=NAME>) per
counter of the CSV, with a y-axis label naming the counter's unit per
sample and a <desc class="scale"> giving the pixel positions of t0, t1,
value 0 and the top value; in it a polyline per XCC that has rows in the
CSV. Each point, mapped back through that scale, must be the mean over
its group (data-group consecutive samples; a power of two, 1 while the
XCC has at most 2 * MAX_POINTS samples) of the rows' host_s and of the
counter's value (the sum of its _se<j> columns). Prints one "ok" line, or
the first disagreement, and exits 0 or 1.
"""
import csv
import math
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("counter chart: " + msg)
    sys.exit(1)


def main():
    svg_path, csv_path = sys.argv[1], sys.argv[2]
    max_points = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    root = ET.parse(svg_path).getroot()

    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if header[:6] != ["xcc", "buffer", "sample", "timestamp",
                      "timestamp_delta", "host_s"]:
        fail("unexpected CSV header %r" % header[:6])
    by_xcc = {}
    for r in rows:
        by_xcc.setdefault(int(r[0]), []).append(r)

    xlabels = [t.text for t in root.iter(NS + "text")
               if t.text and t.text.startswith("seconds since the recording")]
    if not xlabels:
        fail("no time axis label in seconds")

    names = []
    for col in header[6:]:
        base = col.rsplit("_se", 1)[0] if "_se" in col else col
        if base not in names:
            names.append(base)
    panels = [g for g in root.iter(NS + "g")
              if g.get("class") == "counter-panel"]
    if [g.get("data-counter") for g in panels] != names:
        fail("panels %r, CSV counters %r" %
             ([g.get("data-counter") for g in panels], names))

    nlines = npoints = grouped = partial = 0
    for g in panels:
        name = g.get("data-counter")
        cols = [i for i, c in enumerate(header)
                if c == name or c.startswith(name + "_se")]
        ylabel = [t.text for t in g.iter(NS + "text")
                  if t.get("class") == "ylabel"]
        if len(ylabel) != 1 or not (ylabel[0] in ("cycles per sample",
                                                  "waves per sample")):
            fail("%s: y-axis label %r" % (name, ylabel))
        scale = g.find(NS + "desc")
        if scale is None or scale.get("class") != "scale":
            fail("%s: no scale" % name)
        x0, x1, t0, t1, y0, y1, vmax = (float(scale.get("data-" + k)) for k in
                                        ("x0", "x1", "t0", "t1", "y0", "y1",
                                         "vmax"))
        # %.2f pixels: half a hundredth of a pixel, and some slack
        t_tol = 0.006 / (x1 - x0) * (t1 - t0) + 1e-9
        v_tol = 0.006 / (y0 - y1) * vmax + 1e-9
        lines = [p for p in g.iter(NS + "polyline")
                 if p.get("class") == "counter"]
        if sorted(int(p.get("data-xcc")) for p in lines) != sorted(by_xcc):
            fail("%s: lines for XCCs %r, CSV rows for %r" %
                 (name, [p.get("data-xcc") for p in lines], sorted(by_xcc)))
        for p in lines:
            xcc, group = int(p.get("data-xcc")), int(p.get("data-group"))
            mine = by_xcc[xcc]
            if group & (group - 1) or (len(mine) <= 2 * max_points and
                                       group != 1):
                fail("%s XCC %d: group %d for %d samples" %
                     (name, xcc, group, len(mine)))
            pts = [tuple(map(float, q.split(",")))
                   for q in p.get("points").split()]
            if len(pts) != math.ceil(len(mine) / group):
                fail("%s XCC %d: %d points for %d samples in groups of %d" %
                     (name, xcc, len(pts), len(mine), group))
            for i, (px, py) in enumerate(pts):
                chunk = mine[i * group:(i + 1) * group]
                et = sum(float(r[5]) for r in chunk) / len(chunk)
                ev = sum(sum(int(r[c]) for c in cols)
                         for r in chunk) / len(chunk)
                t = t0 + (px - x0) / (x1 - x0) * (t1 - t0)
                v = (y0 - py) / (y0 - y1) * vmax
                if abs(t - et) > t_tol or abs(v - ev) > v_tol:
                    fail("%s XCC %d point %d: (%g s, %g), CSV (%g s, %g)" %
                         (name, xcc, i, t, v, et, ev))
            nlines += 1
            npoints += len(pts)
            grouped += group > 1
            partial += len(mine) % group != 0
    print("ok: %d panels, %d lines, %d points, %d lines of grouped points, "
          "%d ending in a partial group" %
          (len(panels), nlines, npoints, grouped, partial))


if __name__ == "__main__":
    main()
