#!/usr/bin/env python3
"""Trims etcd's v3 API .proto files to what the etcd store uses, for crates/store/proto/.

The etcd store speaks to etcd through Rust code generated from these files and kept in the repository
(crates/store/src/etcd_api/); its test `etcd_api_generated` regenerates that code with a Rust protobuf parser and
fails when it differs. When the pinned etcd API changes:

    scripts/etcd-proto-trim.py <etcd checkout or a directory holding etcd/api/...> crates/store/proto
    EMCO_WRITE_ETCD_API=1 cargo test -p emco-store --test etcd_api_generated

The trim keeps the KV, Watch and Lease services (without KV.RangeStream, which etcd 3.5 does not serve) and the
messages and enums they reach; it drops the grpc-gateway, OpenAPI and etcd-version options, which change nothing on
the wire.
"""

import re
import sys
from pathlib import Path

SERVICES = ("KV", "Watch", "Lease")
DROPPED_RPCS = ("RangeStream",)


def blocks(text):
    """Top-level `message`/`service`/`enum` blocks with the comments above them: (kind, name, text)."""
    out, comment, i, lines = [], [], 0, text.splitlines()
    while i < len(lines):
        line = lines[i]
        head = re.match(r"^(message|service|enum)\s+(\w+)\s*\{", line)
        if head:
            depth, body = 0, []
            while True:
                body.append(lines[i])
                depth += lines[i].count("{") - lines[i].count("}")
                i += 1
                if depth == 0:
                    break
            out.append((head.group(1), head.group(2), "\n".join(comment + body)))
            comment = []
            continue
        comment = comment + [line] if line.startswith("//") else []
        i += 1
    return out


def strip_options(text):
    # rpc bodies that only hold an http option (with nested bindings) become `{}`.
    while True:
        head = re.search(r"\) \{\s*option \(google\.api\.http\)", text)
        if not head:
            break
        start = text.index("{", head.start())
        depth, end = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                break
        text = text[:start] + "{}" + text[end:]
    text = re.sub(r"\n\s*option \(versionpb\.[a-z_]+\) = \"[0-9.]+\";", "", text)
    text = re.sub(r"\s*\[\(versionpb\.[a-z_]+\)\s*=\s*\"[0-9.]+\"\]", "", text)
    return text


def drop_rpcs(text):
    for rpc in DROPPED_RPCS:
        text = re.sub(r"\n(\s*//[^\n]*\n)*\s*rpc " + rpc + r"\([^)]*\) returns \([^)]*\) \{\s*\}\n", "\n", text)
    return text


def main(source, target):
    source, target = Path(source), Path(target)
    rpc = (source / "etcd/api/etcdserverpb/rpc.proto").read_text()
    found = {name: (kind, body) for kind, name, body in blocks(rpc)}
    keep, todo = [], list(SERVICES)
    while todo:
        name = todo.pop(0)
        if name in keep or name not in found:
            continue
        keep.append(name)
        body = drop_rpcs(strip_options(found[name][1]))
        found[name] = (found[name][0], body)
        for word in re.findall(r"\b([A-Z]\w+)\b", body):
            if word in found and word not in keep:
                todo.append(word)
    order = [name for _, name, _ in blocks(rpc) if name in keep]
    header = (
        "// etcd's v3 API (etcd-io/etcd api/etcdserverpb/rpc.proto, Apache-2.0), trimmed by\n"
        "// scripts/etcd-proto-trim.py to the KV, Watch and Lease services the etcd store uses.\n"
        'syntax = "proto3";\npackage etcdserverpb;\n\nimport "etcd/api/mvccpb/kv.proto";\n'
    )
    out = header + "\n" + "\n\n".join(found[name][1] for name in order) + "\n"
    (target / "etcd/api/etcdserverpb").mkdir(parents=True, exist_ok=True)
    (target / "etcd/api/etcdserverpb/rpc.proto").write_text(out)
    kv = (source / "etcd/api/mvccpb/kv.proto").read_text()
    kv = kv.replace('option go_package = "go.etcd.io/etcd/api/v3/mvccpb";\n\n', "")
    (target / "etcd/api/mvccpb").mkdir(parents=True, exist_ok=True)
    (target / "etcd/api/mvccpb/kv.proto").write_text(
        "// etcd's v3 API (etcd-io/etcd api/mvccpb/kv.proto, Apache-2.0).\n" + kv
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
