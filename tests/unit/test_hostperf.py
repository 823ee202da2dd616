"""Splitting a host perf profile of a UML testbed (sslab.analysis.hostperf), on hand-made samples."""

import struct

import pytest

from sslab.analysis import hostperf as hp

UML = "/cache/images/abc/linux"

# Two samples in the UML binary (file offsets 0x1234 and 0x2010), one in the host kernel for
# a ptrace call, one stopping a traced process, one pwrite from libc, one of another program.
SCRIPT = f"""linux 100/100
\t    1234 [unknown] ({UML})

linux 100/100
\t    2010 [unknown] ({UML})

linux 100/100
\tffffffff81000001 _raw_spin_lock ([kernel.kallsyms])
\tffffffff81000002 __x64_sys_ptrace ([kernel.kallsyms])
\tffffffff81000003 do_syscall_64 ([kernel.kallsyms])
\t    5555 ptrace (/usr/lib/x86_64-linux-gnu/libc.so.6)

linux 101/101
\tffffffff81000010 finish_task_switch.isra.0 ([kernel.kallsyms])
\tffffffff81000011 ptrace_stop ([kernel.kallsyms])

linux 100/100
\tffffffff81000020 do_syscall_64 ([kernel.kallsyms])
\t    6666 __libc_pwrite (/usr/lib/x86_64-linux-gnu/libc.so.6)

python 7/7
\t    7777 _PyEval_EvalFrameDefault (/usr/bin/python3.11)
"""

SYSTEM_MAP = """0000000060001000 T _stext
0000000060001200 T tcp_ack
0000000060002000 t hrtimer_interrupt
0000000060003000 D some_data
"""


def elf_with_segments(segments):
    """A 64-bit little-endian ELF header and its PT_LOAD program headers, nothing else."""
    phoff, phentsize = 64, 56
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x20, phoff)
    struct.pack_into("<HH", head, 0x36, phentsize, len(segments))
    for off, size, vaddr in segments:
        head += struct.pack("<IIQQQQQQ", 1, 5, off, vaddr, vaddr, size, size, 0x1000)
    return bytes(head)


def test_link_address_from_program_headers():
    segs = hp.load_segments(elf_with_segments([(0x0, 0x2c4, 0x60000000), (0x1000, 0x2000, 0x60001000)]))
    assert segs == [(0x0, 0x2c4, 0x60000000), (0x1000, 0x2000, 0x60001000)]
    assert hp.link_address(segs, 0x1234) == 0x60001234
    assert hp.link_address(segs, 0x2fff) == 0x60002fff
    assert hp.link_address(segs, 0x3000) is None  # past the last segment
    with pytest.raises(ValueError):
        hp.load_segments(b"\x7fELF\x01\x01" + bytes(60))


def test_samples_split_by_where_they_ran(tmp_path):
    samples = hp.parse_perf_script(SCRIPT)
    assert [s.comm for s in samples] == ["linux"] * 5 + ["python"]
    assert samples[2].frames[1].sym == "__x64_sys_ptrace" and samples[0].frames[0].ip == 0x1234
    uml = hp.UmlBinary(UML, [(0x1000, 0x2000, 0x60001000)], hp.SymbolTable.from_system_map(SYSTEM_MAP))
    got = [hp.categorise(s, uml) for s in samples]
    assert got == [(hp.GUEST_NET, "tcp_ack"), (hp.GUEST_TIME, "hrtimer_interrupt"), (hp.HOST_PTRACE, ""),
                   (hp.HOST_STOP, ""), (hp.HOST_WRITE, ""), (hp.NOT_UML, "")]
    cats, syms = hp.split(samples, uml)
    table = hp.split_table(cats, syms)
    assert "| guest kernel: networking, qdiscs | 16.7 % |" in table  # 1 of 6
    assert "| tcp_ack | 16.7 % |" in table
    # data symbols are not functions: an address past the last text symbol keeps that symbol
    assert hp.SymbolTable.from_system_map(SYSTEM_MAP).name(0x60003004) == "hrtimer_interrupt"
