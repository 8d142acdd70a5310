"""One diagnosis: about what (``node/gpu-1``, ``pod/ml/train``), which check found it, why, and
what to do."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.doctor import checks


@dataclass(frozen=True)
class Diagnosis:
    subject: str
    check: str
    message: str
    hint: str | None = None

    def __post_init__(self) -> None:
        checks.get(self.check)  # an unregistered check ID is a bug, refused here

    def __str__(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.subject}: {self.check}: {self.message}{hint}"
