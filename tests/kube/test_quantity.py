"""Kubernetes' quantity grammar and the pod resource rule, as lint and doctor count them.

Cases from the Kubernetes documentation ("Resource Management for Pods and Containers": 128974848,
129e6, 129M, 128974848000m and 123Mi are about the same memory; 0.1 CPU is 100m; 400m of memory
is 0.4 bytes; "Quantity" in the API reference: the suffixes and ``1.5`` as ``1500m``) and from
k8s.io/apimachinery pkg/api/resource/quantity.go (the grammar, whitespace trimmed on decode,
finer than nano rounded away from zero, binary SI capped at 2^63-1), and for the pod rule from
KEP-753 (sidecar containers) and k8s.io/component-helpers resource.PodRequests.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpustack.kube.pods import effective
from gpustack.kube.quantity import parse, quantity

EQUAL = {
    "1e0": 1,
    "1E0": 1,
    "1000m": 1,
    "1": 1,
    "1.": 1,
    "+1": 1,
    "  1  ": 1,
    "1Ki": 1024,
    "1Mi": 1 << 20,
    "1Gi": 1 << 30,
    "1Ti": 1 << 40,
    "1Pi": 1 << 50,
    "1Ei": 1 << 60,
    "1k": 1000,
    "1M": 10**6,
    "1G": 10**9,
    "1T": 10**12,
    "1P": 10**15,
    "1E": 10**18,
    "1500m": Decimal("1.5"),
    "1.5": Decimal("1.5"),
    ".5": Decimal("0.5"),
    "0.1": Decimal("0.1"),
    "100m": Decimal("0.1"),
    "400m": Decimal("0.4"),
    "1u": Decimal("0.000001"),
    "5n": Decimal("5e-9"),
    "0.1n": Decimal("1e-9"),  # finer than nano: rounded away from zero
    "-0.1n": Decimal("-1e-9"),
    "128974848": 128974848,
    "129e6": 129_000_000,
    "129M": 129_000_000,
    "128974848000m": 128974848,
    "123Mi": 128974848,
    "1e3": 1000,
    "1e+3": 1000,
    "1e-3": Decimal("0.001"),
    "12e6": 12_000_000,
    "12Mi": 12 << 20,
    "1.5Gi": 1536 << 20,
    "8Ei": (1 << 63) - 1,  # binary SI is capped
    "-1": -1,
    "0": 0,
    "0.0": 0,
}
REFUSED = ["", " ", "e3", "1e", "1ki", "1K", "1 Ki", "Ki", "1.5.5", "1e1.5", "one", "1Ki1",
           "1m1", "--1", "1e2147483648", "0x10", "1_000"]  # fmt: skip


@pytest.mark.parametrize(("text", "value"), EQUAL.items(), ids=EQUAL.keys())
def test_a_quantity_has_its_exact_value(text: str, value: int | Decimal) -> None:
    assert parse(text) == value


@pytest.mark.parametrize("text", REFUSED)
def test_what_the_api_server_refuses_is_no_quantity(text: str) -> None:
    assert parse(text) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), (8, 8), (1.5, Decimal("1.5")), (1e20, 10**20), (True, None), ([1], None),
     ({"a": 1}, None), (None, None), (float("nan"), None), (float("inf"), None)],
)  # fmt: skip
def test_numbers_in_a_manifest_are_quantities(value: object, expected: object) -> None:
    assert quantity(value) == expected


#: (main containers, init containers as (amount, sidecar?) in order) -> what the pod needs.
PODS = {
    "main containers add up": ([8, 2], [], 10),
    "an init container runs alone": ([8], [(8, False)], 8),
    "a larger init container sets the need": ([2], [(8, False)], 8),
    "a sidecar runs beside the main containers (issue #21)": ([8], [(4, True)], 12),
    "sidecars add up": ([1], [(2, True), (3, True)], 6),
    "an init container runs beside the sidecars before it": ([2], [(4, True), (6, False)], 10),
    "not beside a sidecar declared after it": ([6], [(8, False), (2, True)], 8),
    "interleaved init containers and sidecars": (
        [1],
        [(2, False), (1, True), (2, False), (1, True)],
        3,
    ),
    "none at all": ([], [], 0),
}


@pytest.mark.parametrize(("main", "inits", "need"), PODS.values(), ids=PODS.keys())
def test_what_a_pod_needs(main: list[int], inits: list[tuple[int, bool]], need: int) -> None:
    got = effective([Decimal(m) for m in main], [(Decimal(a), s) for a, s in inits])
    assert got == need
