"""A small API server on 127.0.0.1 that records every request: Nodes, ResourceSlices, claims.

Enough of the real one's behaviour that the simulated DRA driver's calls mean something:
``generateName`` becomes a name with a random suffix, objects get ``uid`` and
``resourceVersion``, a PUT with a stale or missing resourceVersion is a 409 Conflict, a DELETE
whose preconditions do not match is a 409, ``fieldSelector`` on ``spec.driver`` and
``spec.nodeName`` filters lists, a missing object is 404, a request without the expected bearer
token is 401. Every request is recorded as (method, path, query, body).
"""

from __future__ import annotations

import copy
import json
import secrets
import threading
import urllib.parse
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS_PREFIX = "/apis/resource.k8s.io/v1/namespaces/"
NODES = "/api/v1/nodes/"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any


class FakeApiServer:
    def __init__(self, token: str = "test-token") -> None:
        self.token = token
        self.requests: list[Request] = []
        self.slices: dict[str, dict[str, Any]] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.claims: dict[tuple[str, str], dict[str, Any]] = {}
        self._version = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with server.lock:
                    server.requests.append(Request(self.command, url.path, query, body))
                    if self.headers.get("Authorization") != f"Bearer {server.token}":
                        status, answer = 401, _status(401, "Unauthorized")
                    else:
                        status, answer = server.route(self.command, url.path, query, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> FakeApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- State -------------------------------------------------------------------------------
    def _next_version(self) -> str:
        self._version += 1
        return str(self._version)

    def add_node(self, name: str) -> str:
        uid = str(uuid.uuid4())
        with self.lock:
            self.nodes[name] = {"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": name, "uid": uid}}  # fmt: skip
        return uid

    def add_claim(self, claim: dict[str, Any]) -> None:
        meta = claim["metadata"]
        with self.lock:
            self.claims[(meta["namespace"], meta["name"])] = copy.deepcopy(claim)

    def calls(self, *, skip_gets: bool = False) -> list[tuple[str, str]]:
        with self.lock:
            return [(r.method, r.path) for r in self.requests
                    if not (skip_gets and r.method == "GET")]  # fmt: skip

    # --- Routing -----------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, Any]:
        if method == "GET" and path.startswith(NODES):
            node = self.nodes.get(urllib.parse.unquote(path[len(NODES) :]))
            return (200, node) if node else (404, _status(404, "NotFound"))
        if method == "GET" and path.startswith(CLAIMS_PREFIX) and "/resourceclaims/" in path:
            ns, _, name = path[len(CLAIMS_PREFIX) :].partition("/resourceclaims/")
            claim = self.claims.get((urllib.parse.unquote(ns), urllib.parse.unquote(name)))
            return (200, claim) if claim else (404, _status(404, "NotFound"))
        if path == SLICES and method == "GET":
            items = self._select(query.get("fieldSelector", ""))
            return 200, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                         "metadata": {}, "items": items}  # fmt: skip
        if path == SLICES and method == "POST":
            obj = copy.deepcopy(body)
            meta = obj.setdefault("metadata", {})
            if "name" not in meta:
                meta["name"] = meta.pop("generateName") + secrets.token_hex(3)[:5]
            meta["uid"] = str(uuid.uuid4())
            meta["resourceVersion"] = self._next_version()
            self.slices[meta["name"]] = obj
            return 201, obj
        if path.startswith(SLICES + "/"):
            name = urllib.parse.unquote(path[len(SLICES) + 1 :])
            current = self.slices.get(name)
            if current is None:
                return 404, _status(404, "NotFound")
            if method == "PUT":
                version = (body.get("metadata") or {}).get("resourceVersion")
                if version != current["metadata"]["resourceVersion"]:
                    return 409, _status(409, "Conflict")
                obj = copy.deepcopy(body)
                obj["metadata"]["resourceVersion"] = self._next_version()
                self.slices[name] = obj
                return 200, obj
            if method == "DELETE":
                pre = (body or {}).get("preconditions") or {}
                meta = current["metadata"]
                if (
                    pre.get("uid", meta["uid"]) != meta["uid"]
                    or pre.get("resourceVersion", meta["resourceVersion"])
                    != meta["resourceVersion"]
                ):
                    return 409, _status(409, "Conflict")
                del self.slices[name]
                return 200, _status(200, "Success")
        return 404, _status(404, "NotFound")

    def _select(self, selector: str) -> list[dict[str, Any]]:
        wanted = dict(part.split("=", 1) for part in selector.split(",") if part)
        fields = {"spec.driver": lambda s: s["spec"].get("driver"),
                  "spec.nodeName": lambda s: s["spec"].get("nodeName")}  # fmt: skip
        return [copy.deepcopy(s) for _, s in sorted(self.slices.items())
                if all(fields[k](s) == v for k, v in wanted.items())]  # fmt: skip


def _status(code: int, reason: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Status", "code": code, "reason": reason,
            "message": reason}  # fmt: skip
