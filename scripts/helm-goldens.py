#!/usr/bin/env python3
"""Renders every case of the Helm chart corpus with real Helm and stores the output as goldens for emco-helm's
conformance test (crates/helm/tests/conformance.rs).

A case is a chart with its default values, plus one case per file in the chart's `ci/` folder. Helm itself comes
from PyPI's `helm-python-sdk` wheel (Helm v4's Go SDK as a shared library; no Go toolchain needed):

    python3 -m venv /tmp/helmvenv && /tmp/helmvenv/bin/pip install helm-python-sdk==0.2.2
    /tmp/helmvenv/bin/python scripts/helm-goldens.py [--corpus ../shared/helm-corpus] [--out crates/helm/tests/goldens]

Each case is rendered twice; output that differs between the two runs (generated passwords, keys, UUIDs, dates) is
recorded under "random" as JSON-pointer-like paths, so the test compares those values by shape only.

Each rendered file is also split into documents as Helm v4 splits a manifest (`releaseutil.SplitManifests`), and each
document parsed by Helm's own YAML reader (go-yaml v2 through sigs.k8s.io/yaml); "objects" keeps, per file, a digest
of each document's value (SHA-256 of a canonical JSON text, see `canonical`), so the test judges emco's YAML reader
by Go's, not by itself. A document Go cannot read is recorded as null.

The repository's own conformance charts (crates/helm/tests/corpus) are rendered the same way:

    /tmp/helmvenv/bin/python scripts/helm-goldens.py --corpus crates/helm/tests/corpus
"""

import argparse
import hashlib
import json
import os
import re
import sys

import helm_python

RELEASE = {"name": "r1", "namespace": "default", "revision": 1, "is_install": True}


def cases(corpus):
    for group in sorted(os.listdir(corpus)):
        group_dir = os.path.join(corpus, group)
        if not os.path.isdir(group_dir):
            continue
        for chart in sorted(os.listdir(group_dir)):
            chart_dir = os.path.join(group_dir, chart)
            if not os.path.isfile(os.path.join(chart_dir, "Chart.yaml")):
                continue
            yield group, chart, "default", None
            ci_dir = os.path.join(chart_dir, "ci")
            if os.path.isdir(ci_dir):
                for name in sorted(os.listdir(ci_dir)):
                    if name.endswith((".yaml", ".yml")):
                        yield group, chart, os.path.splitext(name)[0], os.path.join("ci", name)


def render(chart_dir, values_file):
    chart = helm_python.Chart.load(chart_dir)
    values = None
    if values_file is not None:
        with open(os.path.join(chart_dir, values_file), encoding="utf-8") as handle:
            values = helm_python.values_from_yaml(handle.read())
    return chart.render(
        values=values,
        name=RELEASE["name"],
        namespace=RELEASE["namespace"],
        revision=RELEASE["revision"],
        is_install=RELEASE["is_install"],
    )


SEPARATOR = re.compile(r"(?m)^---[ \t]*")


def split_manifests(text):
    """Helm v4's `releaseutil.SplitManifests`: split at `---` lines, leading whitespace trimmed, blank ones dropped."""
    documents = SEPARATOR.split(text.lstrip())
    return [document.lstrip() for document in documents if document.strip()]


def canonical(value):
    """A canonical JSON text: keys sorted, integral numbers below 2^53 as integers, any other number as `%.17g`."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        if float(value).is_integer() and abs(value) < 2**53:
            return str(int(value))
        return "%.17g" % float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    return "{" + ",".join(json.dumps(key, ensure_ascii=False) + ":" + canonical(value[key]) for key in sorted(value)) + "}"


def object_digests(manifests):
    """Per rendered file, the digest of each document as Go's YAML reader reads it (null where it cannot)."""
    digests = {}
    for path, text in sorted(manifests.items()):
        if path.endswith("NOTES.txt"):
            continue
        found = []
        for document in split_manifests(text):
            try:
                value = helm_python.values_from_yaml(document)
            except helm_python.HelmError:
                found.append(None)
                continue
            found.append(hashlib.sha256(canonical(value).encode("utf-8")).hexdigest())
        digests[path] = found
    return digests


def differing_lines(first, second):
    """Template paths and line numbers whose text differs between two renders."""
    random = {}
    for path in sorted(set(first) | set(second)):
        a = first.get(path, "").split("\n")
        b = second.get(path, "").split("\n")
        lines = [i + 1 for i in range(max(len(a), len(b))) if (a[i] if i < len(a) else None) != (b[i] if i < len(b) else None)]
        if lines:
            random[path] = lines
    return random


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--corpus", default=os.path.join(root, "..", "shared", "helm-corpus"))
    parser.add_argument("--out", default=os.path.join(root, "crates", "helm", "tests", "goldens"))
    args = parser.parse_args()
    helm_python.disable_logging() if hasattr(helm_python, "disable_logging") else None
    total = ok = 0
    for group, chart, case, values_file in cases(args.corpus):
        total += 1
        chart_dir = os.path.join(args.corpus, group, chart)
        golden = {
            "chart": f"{group}/{chart}",
            "values": values_file,
            "release": RELEASE,
            "helm": helm_python.helm_sdk_version(),
        }
        try:
            first = render(chart_dir, values_file)
            second = render(chart_dir, values_file)
            golden["outcome"] = "rendered"
            golden["manifests"] = first
            golden["random"] = differing_lines(first, second)
            golden["objects"] = object_digests(first)
            ok += 1
        except helm_python.HelmError as error:
            golden["outcome"] = "error"
            golden["error"] = str(error)
        out_dir = os.path.join(args.out, group, chart)
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{case}.json"), "w", encoding="utf-8") as handle:
            json.dump(golden, handle, indent=1, sort_keys=True, ensure_ascii=False)
            handle.write("\n")
    print(f"{total} cases, {ok} rendered by Helm, {total - ok} rejected by Helm", file=sys.stderr)


if __name__ == "__main__":
    main()
