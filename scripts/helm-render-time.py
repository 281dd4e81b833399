#!/usr/bin/env python3
"""Times real Helm rendering charts (load the chart + render with default values), for the render benchmark of
emco-helm (crates/helm/benches/render.rs runs it in the same run when EMCO_HELM_PYTHON names a Python with
`helm-python-sdk` installed). A chart is a directory, or a `.tgz` that is loaded from its bytes (as emco loads the
archives it stores). Prints one JSON object: chart path -> [median, min, max] milliseconds.

    /tmp/helmvenv/bin/python scripts/helm-render-time.py --runs 20 CHART [CHART ...]
"""

import argparse
import json
import statistics
import time

import helm_python


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("charts", nargs="+")
    args = parser.parse_args()
    result = {}
    for chart_dir in args.charts:
        times = []
        data = None
        if chart_dir.endswith(".tgz"):
            with open(chart_dir, "rb") as handle:
                data = handle.read()
        for _ in range(args.runs + 2):
            start = time.perf_counter()
            chart = helm_python.Chart.load(chart_dir) if data is None else helm_python.Chart.load_archive(data)
            chart.render(values=None, name="r1", namespace="default", is_install=True)
            times.append((time.perf_counter() - start) * 1000.0)
        times = times[2:]  # warm-up
        result[chart_dir] = [statistics.median(times), min(times), max(times)]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
