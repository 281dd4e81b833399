#!/usr/bin/env python3
"""Regenerates crates/helm/src/formats/testdata/fromyaml.json with real Helm: for every input already in the file,
what Helm printed for `{{ input | fromYaml | toJson }}` (go-yaml v2 through sigs.k8s.io/yaml, as Helm reads values
and manifests). To add a case, append `["<yaml>", ""]` to the file and run this script; it fills in Helm's answer.

    python3 -m venv /tmp/helmvenv && /tmp/helmvenv/bin/pip install helm-python-sdk==0.2.2
    /tmp/helmvenv/bin/python scripts/helm-fromyaml.py
"""

import json
import os
import tempfile

import helm_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "crates", "helm", "src", "formats", "testdata", "fromyaml.json")


def main():
    with open(FIXTURE, encoding="utf-8") as handle:
        inputs = [pair[0] for pair in json.load(handle)]
    chart = tempfile.mkdtemp()
    os.makedirs(os.path.join(chart, "templates"))
    with open(os.path.join(chart, "Chart.yaml"), "w", encoding="utf-8") as handle:
        handle.write("apiVersion: v2\nname: fromyaml\nversion: 0.1.0\n")
    # One input per render: a NUL-free separator line could still occur inside an input.
    with open(os.path.join(chart, "templates", "out.txt"), "w", encoding="utf-8") as handle:
        handle.write("{{ .Values.input | fromYaml | toJson }}")
    loaded = helm_python.Chart.load(chart)
    pairs = []
    for text in inputs:
        rendered = loaded.render(values={"input": text}, name="r1", namespace="default", is_install=True)
        pairs.append([text, rendered["fromyaml/templates/out.txt"]])
    with open(FIXTURE, "w", encoding="utf-8") as handle:
        handle.write("[\n")
        handle.write(",\n".join("[\n" + json.dumps(a, ensure_ascii=False) + ",\n" + json.dumps(b, ensure_ascii=False) + "\n]" for a, b in pairs))
        handle.write("\n]\n")
    print(f"{len(pairs)} cases rendered by Helm {helm_python.helm_sdk_version()}")


if __name__ == "__main__":
    main()
