"""Whether a run passed the fidelity checks it had, one rule for every report.

The guest checks the base RTT and the saturating rate (sslab.guest.scenario_run); on a varying
link the host checks the link against its trace (link_ok, sslab.analysis.link); where the capture
was checked, tshark must read every flow as our parser does (capture_ok,
sslab.analysis.capturecheck).  A check a run did not have does not fail it.
"""

from __future__ import annotations


def run_passes(run: dict) -> bool:
    fid = run["fidelity"]
    return bool(fid["base_rtt_ok"] and fid["rate_ok"] and fid.get("link_ok", True) and fid.get("capture_ok", True))
