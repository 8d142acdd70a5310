"""The few Kubernetes API calls the simulated DRA driver makes, over the standard library.

The plugin image ships only grpcio, protobuf, PyYAML and nvidia-ml-py (tests/plugin/
test_imports.py), so there is no Kubernetes client library: this is JSON over ``http.client``.
In a pod it uses the ServiceAccount token and CA mounted under :data:`SERVICE_ACCOUNT_DIR` and
``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``; the token file is read on every call,
because bound tokens are rotated in place. ``--api-server`` points it elsewhere (tests use
``http://127.0.0.1:<port>``).

Every call, and so every RBAC rule the driver needs (:data:`RBAC_RULES`):

- ``GET /api/v1/nodes/<node>``: the Node's UID for the slices' ownerReference;
- ``GET /apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver=…,spec.nodeName=…``;
- ``POST``, ``PUT``, ``DELETE`` of ``resourceslices`` (create, update, delete);
- ``GET /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>`` in NodePrepareResources.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from gpustack import limits

SERVICE_ACCOUNT_DIR: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
RESOURCE_PATH: Final = "/apis/resource.k8s.io/v1"
TIMEOUT_S: Final = 10.0
#: A ServiceAccount token is about 1 KiB; a file far larger is not one.
MAX_TOKEN_BYTES: Final = 64 << 10

#: (API group, resource, verbs): exactly the calls above, nothing else.
RBAC_RULES: Final = (
    ("", "nodes", ("get",)),
    ("resource.k8s.io", "resourceslices", ("list", "create", "update", "delete")),
    ("resource.k8s.io", "resourceclaims", ("get",)),
)


class ApiError(RuntimeError):
    """A non-2xx answer, or no answer; ``status`` 0 when the server could not be reached."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ApiConfig:
    """Where the API server is and how to authenticate."""

    server: str
    token_file: str = ""
    ca_file: str = ""

    @classmethod
    def in_cluster(cls, env: Mapping[str, str]) -> ApiConfig:
        host = env.get("KUBERNETES_SERVICE_HOST", "")
        port = env.get("KUBERNETES_SERVICE_PORT", "443")
        if not host:
            raise ApiError(0, "not in a pod (KUBERNETES_SERVICE_HOST is unset); give --api-server")
        if ":" in host:  # IPv6
            host = f"[{host}]"
        return cls(
            server=f"https://{host}:{port}",
            token_file=os.path.join(SERVICE_ACCOUNT_DIR, "token"),
            ca_file=os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt"),
        )


class KubeClient:
    """JSON requests against one API server."""

    def __init__(self, config: ApiConfig) -> None:
        self.config = config
        url = urllib.parse.urlsplit(config.server)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ApiError(0, f"--api-server {config.server!r} is not an http(s) URL")
        self._url = url

    def _connection(self) -> http.client.HTTPConnection:
        host, port = self._url.hostname or "", self._url.port
        if self._url.scheme == "http":
            return http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
        context = ssl.create_default_context(cafile=self.config.ca_file or None)
        return http.client.HTTPSConnection(host, port, timeout=TIMEOUT_S, context=context)

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        query: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The decoded JSON answer; raises :class:`ApiError`."""
        target = path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = {"Accept": "application/json", "User-Agent": "gpustack-dra-plugin"}
        if self.config.token_file:
            try:  # a regular file of at most MAX_TOKEN_BYTES, as every file gpustack reads
                token = limits.read_text(self.config.token_file, MAX_TOKEN_BYTES, what="token")
            except limits.Refused as exc:
                raise ApiError(0, f"cannot read token {self.config.token_file}: {exc}") from None
            headers["Authorization"] = "Bearer " + token.strip()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, target, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ApiError(0, f"{method} {path}: {exc}") from None
        finally:
            conn.close()
        try:
            decoded = json.loads(raw) if raw else {}
        except ValueError:
            decoded = {}
        if not 200 <= response.status < 300:
            message = decoded.get("message") if isinstance(decoded, dict) else None
            raise ApiError(
                response.status, f"{method} {path}: {response.status} {message or response.reason}"
            )
        if not isinstance(decoded, dict):
            raise ApiError(response.status, f"{method} {path}: the answer is not a JSON object")
        return decoded

    # --- The calls -------------------------------------------------------------------------
    def get_node(self, name: str) -> dict[str, Any]:
        return self.request("GET", f"/api/v1/nodes/{_seg(name)}")

    def list_slices(self, driver: str, node_name: str) -> list[dict[str, Any]]:
        selector = f"spec.driver={driver},spec.nodeName={node_name}"
        found = self.request(
            "GET", f"{RESOURCE_PATH}/resourceslices", query={"fieldSelector": selector}
        )
        items = found.get("items") or []
        return [i for i in items if isinstance(i, dict)]

    def create_slice(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.request("POST", f"{RESOURCE_PATH}/resourceslices", body=body)

    def update_slice(self, body: Mapping[str, Any]) -> dict[str, Any]:
        name = body["metadata"]["name"]
        return self.request("PUT", f"{RESOURCE_PATH}/resourceslices/{_seg(name)}", body=body)

    def delete_slice(self, name: str, uid: str, resource_version: str) -> None:
        """Delete only the version that was read (preconditions), as NVIDIA's controller does."""
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": uid, "resourceVersion": resource_version},
        }
        self.request("DELETE", f"{RESOURCE_PATH}/resourceslices/{_seg(name)}", body=options)

    def get_claim(self, namespace: str, name: str) -> dict[str, Any]:
        return self.request(
            "GET", f"{RESOURCE_PATH}/namespaces/{_seg(namespace)}/resourceclaims/{_seg(name)}"
        )


def _seg(text: str) -> str:
    """One URL path segment (names come from the kubelet, never trusted to be clean)."""
    return urllib.parse.quote(text, safe="")
