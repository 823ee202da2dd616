"""Axes: the values a file crosses (moved here from sslab.matrix.spec, unchanged)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Axis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    option: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    values: list[str] = Field(min_length=1)
    #: The values name congestion controls: checked against the kernel under test.
    cca: bool = False
    #: (cca axes) a value whose flows run another congestion control than the one it names: the
    #: column CUBIC runs cubic_hs, Linux's CUBIC ACK for ACK (kernel/README.md, the oracle) in the
    #: HyStart rounds of the SUSS version's kernel (5.19's under SUSS 2024, as the paper's flows),
    #: where the kernel's own `cubic` has 6.1.192's.  Names, keys and labels keep the value.
    runs_as: dict[str, str] = Field(default_factory=dict)

    def runs(self, value: str) -> str:
        """The congestion control a value's flows run."""
        return self.runs_as.get(value, value)
