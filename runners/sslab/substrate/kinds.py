"""What each substrate is, as the harness plans around it: one row per substrate.

The testbed classes (uml.UMLTestbed, qemu.TestbedVM, native.NativeHost)
boot and run jobs; this table says what planning needs to know of a
substrate before any boot, in place of asking for its name:

    side_by_side     several runs at once on one host do not disturb each
                     other (UML: virtual time, each pinned to a core of its
                     own); on a real clock they would, so one at a time
    boot_share       repetitions of a setting per boot by default (BOOT_SHARE=)
    topology_backend who builds a topology whose backend is `auto`
    manifest_section where the image's manifest lists what this substrate's
                     kernel offers (its congestion controls): the UML
                     kernel's section, or the stock kernel's (top level)
    has_image        boots the testbed image (a native host runs its own kernel)
    virtual_time     its clock is the guest's own: a run's wall time follows
                     the guest time it simulates (UML), not the flows' length
    in_container     the testbed's container image carries it (CONTAINER=)

What a testbed object of each (uml.UMLTestbed, qemu.TestbedVM,
native.NativeHost) offers the harness is the Testbed protocol in
sslab.substrate.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Repetitions of one setting per boot under UML's virtual time (BOOT_SHARE=): a boot, its topology
#: and its fidelity check cost a Table 1 cell about 7.5 of its 38 s (make bench BENCH=profile, 25 Nov
#: 2026); ten share them.  On a real clock one: a boot's fixed cost is a smaller share of a cell, and
#: a repetition in a boot of its own is what the real-clock runs so far were.
BOOT_SHARE_UML = 10


@dataclass(frozen=True)
class SubstrateKind:
    name: str
    side_by_side: bool
    boot_share: int
    topology_backend: str
    manifest_section: str | None
    has_image: bool
    virtual_time: bool
    in_container: bool

    def clock(self, choice: str = "real") -> str:
        """The clock its runs are recorded under; @choice (real, virtual) is QEMU's to make."""
        if self.name == "uml":
            return "uml/inf-cpu"
        if self.name == "native":
            return "native"
        return "qemu/icount" if choice == "virtual" else "qemu/mttcg"

    def offered_ccas(self, manifest: dict) -> list[str] | None:
        """The congestion controls the image's manifest lists for this substrate's kernel (None: an
        image from before they were recorded)."""
        section = (manifest.get(self.manifest_section) or {}) if self.manifest_section else manifest
        return section.get("tcp_congestion_controls")


KINDS = {
    # Mininet under QEMU (the VM has the processes to spare); batched ip/tc in namespaces elsewhere.
    "uml": SubstrateKind("uml", side_by_side=True, boot_share=BOOT_SHARE_UML, topology_backend="netns",
                         manifest_section="uml", has_image=True, virtual_time=True, in_container=True),
    "vm": SubstrateKind("vm", side_by_side=False, boot_share=1, topology_backend="mininet", manifest_section=None,
                        has_image=True, virtual_time=False, in_container=False),
    "native": SubstrateKind("native", side_by_side=False, boot_share=1, topology_backend="netns",
                            manifest_section=None, has_image=False, virtual_time=False, in_container=False),
}


def kind_of(name: str) -> SubstrateKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown substrate {name!r}: use {', '.join(KINDS)}") from None
