"""The number a job or run keys the guest's random numbers from (sslab.guest.timeline)."""

import hashlib
from types import SimpleNamespace

from sslab.guest import timeline
from sslab.guest.timeline import random_seed, rekey_random


def test_a_runs_number_is_the_boots_seed_and_the_runs_index_hashed():
    plan = SimpleNamespace(seed=7, entropy_seed=7)
    want = int.from_bytes(hashlib.sha256(b"sslab-rekey/7/3").digest()[:8], "big")
    assert random_seed(plan, 3) == want
    # Another run, the job's own, another seed: another number; a scenario whose entropy does not
    # vary (entropy_seed 0) draws the same whatever its seed.
    assert len({random_seed(plan, 3), random_seed(plan, 4), random_seed(plan, "job"),
                random_seed(SimpleNamespace(seed=8, entropy_seed=8), 3)}) == 4
    assert random_seed(SimpleNamespace(seed=7, entropy_seed=0), 3) == \
        random_seed(SimpleNamespace(seed=8, entropy_seed=0), 3)
    # A plan from before the entropy seed was written: the scenario's seed.
    assert random_seed(SimpleNamespace(seed=7, entropy_seed=None), 3) == want
    assert 0 <= want < 2 ** 64


def test_rekey_writes_the_number_where_the_kernel_takes_it_and_nothing_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setattr(timeline, "REKEY_SYSCTL", tmp_path / "missing" / "sslab_rekey")
    assert rekey_random(5) is None
    setting = tmp_path / "sslab_rekey"
    setting.write_text("0\n")
    monkeypatch.setattr(timeline, "REKEY_SYSCTL", setting)
    assert rekey_random(2 ** 64 - 1) == 2 ** 64 - 1 and setting.read_text() == f"{2 ** 64 - 1}\n"
