"""`sslab same-bytes` over two results trees made by real runs: the same experiment run into each is the
same bytes, run by run; a capture changed by one byte is not."""

import pytest

from .helpers import keyed, sslab

pytestmark = pytest.mark.vm

E1_ONE_START = ["run", "startup", "--select", "cubic_hs", "--reps", "1", "--jobs", "1"]


def test_two_trees_of_the_same_runs_are_the_same_bytes_and_one_byte_changed_is_found(tmp_path, image):
    before, after = tmp_path / "before", tmp_path / "after"
    for results in (before, after):
        res = sslab(E1_ONE_START, results)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    res = sslab(["same-bytes", str(before), str(after)], tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("1 run paired, 0 not; ") and " flows the same bytes; " in last, res.stdout
    flows, files = last.split("; ")[1], last.split("; ")[2]
    n_flows, n_files = int(flows.split(" of ")[1].split()[0]), int(files.split(" of ")[1].split()[0])
    assert n_flows >= 2 and flows == f"{n_flows} of {n_flows} flows the same bytes"
    assert n_files >= 2 and files == f"{n_files} of {n_files} capture and trace files"
    # One byte of one capture changed (the last frame's last byte): the flows can still read the same,
    # the file cannot.
    [(_, run)] = keyed(after, "startup").items()
    pcap = sorted(run.glob("job/out/runs/*/*.pcap"))[0]
    data = bytearray(pcap.read_bytes())
    data[-1] ^= 0xFF
    pcap.write_bytes(bytes(data))
    res = sslab(["same-bytes", str(before), str(after)], tmp_path)
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-3000:]
    assert f"file differs: {pcap.relative_to(run)}" in res.stdout
    # The same experiment run again into one tree: its key names the new run, and the one set aside
    # (under failed/) is no run: the trees pair again, the same bytes.
    res = sslab([*E1_ONE_START, "--again"], after)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(list((after / "startup" / "failed").glob("*-set-aside"))) == 1
    res = sslab(["same-bytes", str(before), str(after)], tmp_path)
    assert res.returncode == 0 and res.stdout.strip().splitlines()[-1] == last, res.stdout + res.stderr
