"""The paper's testbed as settings, read back from real runs on the UML guest: Linux's offloads (merged
segments queued whole at the bottleneck), the five client-server pairs (three small flows on one
server), and the handshake's losses (a SYN-ACK the bottleneck dropped, in the run's record)."""

import json

import pytest
import yaml

from sslab.analysis.pcap import open_pcap, pcap_records, stored_capture, tcp_segments

from .helpers import one_cubic_flow, sslab, startup_runs

pytestmark = pytest.mark.vm
MSS = 1448
SYN, ACK = 0x02, 0x10


def source_addresses(pcap) -> dict[int, bytes]:
    """Each TCP source port's IPv4 source address in a capture (the first packet from it)."""
    out: dict[int, bytes] = {}
    with open_pcap(pcap) as f:
        for _, buf in pcap_records(f):
            if buf[12:14] == b"\x08\x00" and buf[23] == 6:
                t = 14 + (buf[14] & 0x0F) * 4
                out.setdefault(int.from_bytes(buf[t:t + 2], "big"), bytes(buf[26:30]))
    return out


def one_flow(tmp_path, offloads: str) -> tuple[dict, list[int]]:
    """A CUBIC flow of 2 MB through 20 Mbit/s, 40 ms, 50 packets of buffer: its run record and the payload
    of every data segment it sent, as the bottleneck's capture saw them leave the queue."""
    tag_dir, run = one_cubic_flow(tmp_path, f"offloads-{offloads}", {"offloads": offloads}, "20mbit", 50, "2MB")
    sizes = [n for _, (sport, _, _, _), n in tcp_segments(stored_capture(tag_dir / run["pcap"])) if sport == 5201 and n]
    return run, sizes


def test_linux_offloads_queue_merged_segments_whole_at_the_bottleneck(tmp_path, image):
    run, sizes = one_flow(tmp_path, "linux")
    # Segments of several MSS leave the bottleneck's queue whole (TSO/GSO, as GRO hands them on), none
    # over 64 KB, and all of the flow's 2 MB among them.
    assert max(sizes) > 2 * MSS and max(sizes) <= 65535 and sum(sizes) >= 2_000_000, max(sizes)
    # The netem counts each as one packet: the most it held at once is more than a frame a packet.
    peak = run["bottleneck"]
    assert peak["peak_bytes"] > 1514 * peak["peak_pkts"], peak
    assert run["flows"][0]["bytes_received"] == 2_000_000

    off_run, off_sizes = one_flow(tmp_path, "off")
    assert max(off_sizes) == MSS and off_run["bottleneck"]["peak_bytes"] <= 1514 * off_run["bottleneck"]["peak_pkts"]


def test_a_routers_gro_depth_caps_every_packet_at_its_segments(tmp_path, image):
    # linux-4: Linux's offloads, a router's GRO merging at most four frames of a burst.  At 100 Mbit/s
    # TCP would size its segments above four MSS (a millisecond of its pacing rate): the cap holds them.
    tag_dir, run = one_cubic_flow(tmp_path, "offloads-linux-4", {"offloads": "linux-4"}, "100mbit", 50, "2MB")
    sizes = [n for _, (sport, _, _, _), n in tcp_segments(stored_capture(tag_dir / run["pcap"])) if sport == 5201 and n]
    assert max(sizes) == 4 * MSS and sum(sizes) >= 2_000_000, sorted(set(sizes))
    assert sum(n > MSS for n in sizes) > len(sizes) // 2, sorted(set(sizes))
    peak = run["bottleneck"]
    assert 1514 * peak["peak_pkts"] < peak["peak_bytes"] <= 4 * 1514 * peak["peak_pkts"], peak
    assert run["flows"][0]["bytes_received"] == 2_000_000


def test_the_papers_five_pairs_put_three_small_flows_on_each_server(tmp_path, image):
    """Table 1's cell with LAYOUT=five-pairs (its large flow cut to 20 MB, which still runs when the first
    small flow starts): the five pairs' servers, the small flows three to a server in the paper's RTT
    order, as the bottleneck's capture sees their addresses."""
    res = sslab(["run", "experiments/reproduce-table1.yaml", "--iter", "1", "--set", "CCA=cubic", "--set", "BUF=1BDP",
                 "--set", "RTT=25ms", "--set", "LAYOUT=five-pairs", "--set", "cases.flows.0.size=20MB"],
                tmp_path, timeout=1800)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [cell] = [d for d in (tmp_path / "table1").glob("*/cells/*") if (d / "cell.json").is_file()]
    plan = json.loads((cell / "job" / "plan.json").read_text())
    assert len(plan["pairs"]) == 5 and [p["rtt_ms"] for p in plan["pairs"]] == [25.0, 25.0, 50.0, 100.0, 200.0]
    for run_json in sorted((cell / "job" / "out" / "runs").glob("*/run.json")):
        run = json.loads(run_json.read_text())
        flows = run["flows"]
        assert [f["pair"] for f in flows] == [1] + [2, 3, 4, 5] * 3
        server_of = source_addresses(run_json.parent / run["pcap"])
        ports = {f["port"]: f["pair"] for f in flows}
        by_pair: dict[int, set] = {}
        for port, pair in ports.items():
            by_pair.setdefault(pair, set()).add(server_of[port])
        # One server address a pair, five in all: three small flows from each of pairs 2-5.
        assert all(len(a) == 1 for a in by_pair.values()) and len(set().union(*by_pair.values())) == 5
        assert sorted(sum(1 for p in ports.values() if p == k) for k in range(2, 6)) == [3, 3, 3, 3]


def test_a_synack_the_bottleneck_dropped_is_in_the_flows_record(tmp_path, image):
    """Ten 50 KB flows join two BBRv1 flows that keep a 4-packet buffer overflowing (they aim at twice a
    41-packet BDP, whatever the loss): some SYN-ACKs are dropped at the bottleneck.  Each flow's record says how often its SYN-ACK went (the kernel's count), the capture
    after the queue sees fewer than were sent for those flows, and their connect() waited the
    retransmission timeout (1 s) inside the client's FCT."""
    scenario = {
        "name": "synack-loss", "topology": {"kind": "dumbbell", "pairs": 2},
        "bottleneck": {"rate": "10mbit", "buffer": {"packets": 4}},
        "pairs": [{"rtt": "50ms"}, {"rtt": "50ms"}],
        "cases": [{"name": "one", "flows": [{"pair": 1, "cc": "bbr", "size": "8MB"}, {"pair": 1, "cc": "bbr", "size": "8MB"}]
                   + [{"pair": 2, "cc": "cubic", "size": "50KB", "start": f"{1 + 0.37 * k:.2f}s"} for k in range(10)]}],
        "repetitions": 1, "capture": {"pcap": True, "snaplen": 96, "traces": False},
    }
    path = tmp_path / "synack.yaml"
    path.write_text(yaml.safe_dump(scenario))
    [(tag_dir, run)] = startup_runs(path, tmp_path / "synack")
    synacks_seen: dict[int, int] = {}
    for _, (sport, dport, _, flags), _ in tcp_segments(stored_capture(tag_dir / run["pcap"])):
        if flags & SYN and flags & ACK:
            synacks_seen[sport] = synacks_seen.get(sport, 0) + 1
    small = run["flows"][2:]
    assert all(f["syn_retransmits"] is not None and f["synack_retransmits"] is not None for f in small)
    lost = {f["port"]: 1 + f["synack_retransmits"] - synacks_seen.get(f["port"], 0) for f in small}
    assert all(n >= 0 for n in lost.values()), (lost, synacks_seen)
    hit = [f for f in small if lost[f["port"]] > 0]
    assert hit, [(f["port"], f["synack_retransmits"], synacks_seen.get(f["port"])) for f in small]
    for f in hit:
        assert f["synack_retransmits"] >= 1 and f["connect_s"] >= 1.0 and f["fct_s"] > f["connect_s"], f
    # A flow whose handshake lost nothing connected within a few RTTs.
    assert all(f["connect_s"] < 1.0 for f in small if not f["synack_retransmits"] and not f["syn_retransmits"])
