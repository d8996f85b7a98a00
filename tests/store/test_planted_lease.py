"""A lease planted in a shared bucket never locks writers out: its expiry is judged by the
reader's clock (one further than a lease lasts is taken over at once), and one that cannot
be read, or is too big to be a lease, is taken over too. The real `mm rm` on SeaweedFS."""

from __future__ import annotations

import json
import time

import pytest

from mmcli.store.leases import LEASE, lease_expired
from mmcli.store.recordings import Store
from mmcli.store.s3 import S3Objects
from tests.helpers import sample_recording
from tests.store.test_manage_on_s3 import mm, names


@pytest.mark.parametrize(
    "planted",
    [
        b'{"holder": "forged", "until": 1e12}',
        b'{"holder": "forged", "until": "NaN"}',
        b"not a lease",
        b'{"holder": "' + b"x" * 100_000 + b'", "until": 1e12}',
    ],
    ids=["far-future", "nan", "garbage", "huge"],
)
def test_a_planted_lease_does_not_keep_mm_rm_out(s3_url: str, planted: bytes) -> None:
    store = Store(s3_url)
    with store.lock("loan"):
        store.save(sample_recording("loan"))
    S3Objects(s3_url).put(".mm/locks/loan", planted)
    started = time.monotonic()
    done = mm("rm", "loan", "--yes", "--store", s3_url, "--lock-wait", "5")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 4.5  # taken over at once, not after the wait
    assert names(s3_url) == []


def test_a_live_lease_is_waited_for_and_the_clock_judges_it() -> None:
    now = time.time()
    held = json.dumps({"holder": "h", "until": now + LEASE / 2}).encode()
    assert not lease_expired(held, LEASE)
    assert lease_expired(json.dumps({"holder": "h", "until": now - 1}).encode(), LEASE)
    assert lease_expired(json.dumps({"holder": "h", "until": now + 10 * LEASE}).encode(), LEASE)
    assert lease_expired(b"\xff\xfe", LEASE)
