"""The echo measurement's parts (sslab.guest.echo), with numbers worked by hand."""

from __future__ import annotations

import socket
import struct

import pytest

from sslab.guest.echo import (SO_TIMESTAMPNS, EchoError, Echoes, checksum, echo_reply_of, echo_request,
                              ping_rtt_us, rx_stamp_ns)


def test_checksum_is_rfc_1071s_worked_example():
    # RFC 1071, section 3: 0001 + f203 + f4f5 + f6f7 = 2ddf0, folded ddf2, complemented 220d.
    assert checksum(bytes.fromhex("0001f203f4f5f6f7")) == 0x220D
    # An odd length is padded with a zero byte: 0x0100 + 0x0200 = 0x0300 -> 0xfcff.
    assert checksum(bytes.fromhex("010002")) == 0xFCFF


def test_an_echo_request_carries_its_identifier_sequence_and_a_checksum_that_verifies():
    # 0800 + 0000 + 1234 + 0001 = 1a35: the checksum is e5ca.
    assert echo_request(0x1234, 1, b"") == bytes.fromhex("0800e5ca12340001")
    packet = echo_request(0xBEEF, 7, bytes(56))
    assert len(packet) == 64                      # ping's 56 data bytes and ICMP's 8
    assert checksum(packet) == 0                  # a receiver's check: the sum with it is all ones


def ip_header(ihl_words: int = 5) -> bytes:
    return bytes([0x40 | ihl_words]) + bytes(ihl_words * 4 - 1)


def test_a_reply_is_read_past_an_ip_header_of_any_length_and_nothing_else_is_a_reply():
    reply = struct.pack("!BBHHH", 0, 0, 0, 0x1234, 2)
    assert echo_reply_of(ip_header() + reply) == (0x1234, 2)
    assert echo_reply_of(ip_header(6) + reply) == (0x1234, 2)       # 4 bytes of IP options
    assert echo_reply_of(ip_header() + echo_request(0x1234, 2, b"")) is None   # a request
    assert echo_reply_of(ip_header() + struct.pack("!BBHHH", 3, 1, 0, 0, 0)) is None  # unreachable
    assert echo_reply_of(ip_header() + reply[:7]) is None           # cut short
    assert echo_reply_of(b"\x45") is None


def test_the_receive_stamp_is_read_from_its_control_message_only():
    stamp = struct.pack("@qq", 5, 123)
    assert rx_stamp_ns([(socket.SOL_SOCKET, SO_TIMESTAMPNS, stamp)]) == 5_000_000_123
    assert rx_stamp_ns([(socket.SOL_SOCKET, 29, stamp)]) is None     # SO_TIMESTAMP's timeval: not ours
    assert rx_stamp_ns([]) is None


def test_a_round_trip_is_pings_each_stamp_cut_to_the_microsecond():
    # Sent at 1.000999 ms, received at 101.001000 ms: 101001 - 1000 = 100001 us, where the
    # nanoseconds between them are 100000.001 us.
    assert ping_rtt_us(1_000_999, 101_001_000) == 100_001
    assert ping_rtt_us(999, 1_000) == 1                 # 1 ns across a microsecond's edge
    assert ping_rtt_us(1_000, 1_999) == 0               # 999 ns within one


def test_the_least_rtt_in_ms_and_none_is_an_error():
    assert Echoes(sent=3, rtts_us=(100_017, 100_016, 100_020)).min_ms == 100.016
    with pytest.raises(EchoError, match="no reply to 3 echo request"):
        Echoes(sent=3, rtts_us=()).min_ms
