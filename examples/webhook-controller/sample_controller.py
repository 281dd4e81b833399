#!/usr/bin/env python3
"""EMCO's sample-controller as a webhook: emco POSTs a DIG's objects, this answers what to change.

Every Deployment gets the label sample.emco.io/intent=<intent> on its pods, and every app gets, on each of its
clusters, a ConfigMap <app>-sample saying which cluster it is on. Python's standard library only.
Run: sample_controller.py --cert server.crt --key server.key [--port 8443]   (prints "listening on PORT")
"""
import argparse, json, ssl
from http.server import BaseHTTPRequestHandler, HTTPServer

LABEL = "sample.emco.io/intent"


def changes(request):
    patches, objects = [], []
    for app in request["apps"]:
        for placed in app["clusters"]:
            for obj in placed["objects"]:
                if obj.get("kind") == "Deployment":
                    labels = obj.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")
                    op = {"op": "add", "path": "/spec/template/metadata/labels", "value": {LABEL: request["intent"]}}
                    if labels is not None:
                        op = {"op": "add", "path": "/spec/template/metadata/labels/" + LABEL.replace("/", "~1"),
                              "value": request["intent"]}
                    patches.append({"app": app["name"], "cluster": placed["cluster"], "kind": "Deployment",
                                    "name": obj["metadata"]["name"], "patch": [op]})
            objects.append({"app": app["name"], "cluster": placed["cluster"], "object": {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": app["name"] + "-sample"},
                "data": {"cluster": placed["cluster"], "intent": request["intent"]}}})
    return {"patches": patches, "objects": objects}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps(changes(request)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=8443)
    args = parser.parse_args()
    server = HTTPServer(("127.0.0.1", args.port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
