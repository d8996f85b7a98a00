"""`mm export`, `import`, `mv`, `prune` and `rm` on a store in a bucket."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

from mmcli.store.recordings import Store
from tests.helpers import sample_recording


def mm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mmcli", *args], capture_output=True, text=True, timeout=60
    )


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(out, "PNG")
    return out.getvalue()


def names(url: str) -> list[str]:
    return [e["name"] for e in json.loads(mm("ls", "--json", "--store", url).stdout)]


def test_managing_recordings_in_a_bucket(s3_url: str, tmp_path: Path) -> None:
    store = Store(s3_url)
    rec = sample_recording("loan")
    with store.lock("loan"):
        store.save(rec, {f"t-{i:04d}.png": png() for i in range(4)})
    archive = tmp_path / "loan.mmr"
    assert mm("export", "loan", str(archive), "--store", s3_url).returncode == 0
    imported = mm("import", str(archive), "--as", "copy", "--store", s3_url)
    assert imported.returncode == 0, imported.stderr
    assert sorted(store.thumbs.names("copy")) == [f"t-{i:04d}.png" for i in range(4)]
    assert mm("mv", "copy", "moved", "--store", s3_url).returncode == 0
    assert names(s3_url) == ["loan", "moved"]
    assert store.thumbs.names("copy") == []
    assert mm("rm", "moved", "--yes", "--store", s3_url).returncode == 0
    assert names(s3_url) == ["loan"] and store.thumbs.names("moved") == []
    pruned = mm("prune", "--older-than", "0s", "--yes", "--store", s3_url)
    assert pruned.returncode == 0, pruned.stderr
    assert names(s3_url) == []
    assert [i.key for i in store.objects.listing() if not i.key.startswith(".mm/")] == []
