#!/usr/bin/env python3
"""Brings kstatus's own compute test cases into the repository as fixtures for emco-k8s's readiness test
(crates/k8s/tests/kstatus.rs): every case of `pkg/kstatus/status/status_compute_test.go` of sigs.k8s.io/cli-utils,
its object (the test's YAML, as JSON) and the status kstatus expects (Current, InProgress, Failed, Terminating,
Unknown, NotFound).

    git clone https://github.com/kubernetes-sigs/cli-utils /tmp/cli-utils   # any copy of the repository
    python3 scripts/kstatus-fixtures.py /tmp/cli-utils [--out crates/k8s/tests/fixtures/kstatus-compute.json]

Needs PyYAML. A case whose object the test builds with `fmt.Sprintf(…, time.Now()…)` gets the time the script runs at
in its place and is marked `"timeDependent": true` (kstatus judges such a pod by its age).
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

import yaml

TEST_FILE = "pkg/kstatus/status/status_compute_test.go"
VARIABLE = re.compile(r"^var (\w+) = `(.*?)`", re.S | re.M)
TEST = re.compile(r"^func (Test\w+)\(t \*testing\.T\) \{(.*?)^\}", re.S | re.M)
CASE = re.compile(r'"([^"]+)":\s*\{\s*spec:\s*([^\n]+?),\s*\n\s*expectedStatus:\s*(\w+)Status', re.S)
SPRINTF = re.compile(r"fmt\.Sprintf\((\w+),\s*time\.Now\(\)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("cli_utils", help="a checkout of sigs.k8s.io/cli-utils")
    parser.add_argument("--out", default=os.path.join(root, "crates", "k8s", "tests", "fixtures", "kstatus-compute.json"))
    args = parser.parse_args()
    with open(os.path.join(args.cli_utils, TEST_FILE), encoding="utf-8") as handle:
        source = handle.read()
    try:
        commit = subprocess.run(["git", "-C", args.cli_utils, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    variables = {name: text for name, text in VARIABLE.findall(source)}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    cases = []
    for test, body in TEST.findall(source):
        for name, spec, expected in CASE.findall(body):
            spec = spec.strip()
            time_dependent = False
            sprintf = SPRINTF.match(spec)
            if sprintf:
                text = variables[sprintf.group(1)].replace("%s", now)
                time_dependent = True
            elif spec in variables:
                text = variables[spec]
            else:
                sys.exit(f"{test}/{name}: cannot read spec {spec!r}")
            cases.append({
                "test": test,
                "case": name,
                "expected": expected,
                "timeDependent": time_dependent,
                "object": yaml.safe_load(text),
            })
    fixture = {"source": f"sigs.k8s.io/cli-utils@{commit}/{TEST_FILE}", "cases": cases}
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(fixture, handle, indent=1, sort_keys=True, default=str)
        handle.write("\n")
    print(f"{len(cases)} cases from {len(set(c['test'] for c in cases))} tests")


if __name__ == "__main__":
    main()
