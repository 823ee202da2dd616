"""Counters the guest reads to tell where a run lost packets."""

from sslab.guest.capture import dropped_by_kernel
from sslab.guest.netns import parse_softnet_drops, parse_tcp_counters
from sslab.guest.vmcheck import SENDER_COUNTERS

# /proc/net/softnet_stat of a 2-CPU guest (6.1): processed, dropped, time_squeeze, ... in hex.
SOFTNET_STAT = (
    "0004c2a1 000000fd 00000003 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
    "00000000 00000000\n"
    "0001d0f0 0000005a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
    "00000000 00000001\n")


def test_softnet_drops_sum_the_second_column_of_every_cpu_in_hex():
    # 0xfd + 0x5a = 253 + 90
    assert parse_softnet_drops(SOFTNET_STAT) == 343


def test_softnet_drops_of_a_guest_that_dropped_nothing():
    assert parse_softnet_drops("00000010 00000000 00000000\n\n") == 0


NETSTAT = (
    "TcpExt: SyncookiesSent TCPTimeouts TCPSpuriousRTOs TCPFastRetrans TCPSACKReorder\n"
    "TcpExt: 0 1 1 254 261\n"
    "IpExt: InNoRoutes InTruncatedPkts\n"
    "IpExt: 0 0\n")


def test_tcp_counters_pick_the_named_ones_of_the_tcpext_table():
    assert parse_tcp_counters(NETSTAT, SENDER_COUNTERS) == {"TCPTimeouts": 1, "TCPSpuriousRTOs": 1,
                                                            "TCPFastRetrans": 254, "TCPSACKReorder": 261}


def test_the_capture_drop_count_is_read_from_tcpdumps_note_in_both_its_forms():
    # At its exit, a line a count; on SIGUSR1 (a kept capture's take), one line; 1 is singular.
    assert dropped_by_kernel("10 packets captured\n12 packets received by filter\n3 packets dropped by kernel") == 3
    assert dropped_by_kernel("tcpdump: 1 packet captured, 2 packets received by filter, 1 packet dropped by kernel") == 1
    assert dropped_by_kernel("tcpdump: listening on eth0") is None and dropped_by_kernel(None) is None
