"""`--display vnc://...`: the address, the lock's key, the password's sources, key names."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmcli.backends.vnc import keysym, vnc_password
from mmcli.backends.vncauth import vnc_response
from mmcli.desktop.display import VncAddress, display_key, vnc_address
from mmcli.errors import UsageError


def test_addresses() -> None:
    assert vnc_address(":99") is None
    assert vnc_address("vnc://10.0.0.5") == VncAddress("10.0.0.5", 5900)
    assert vnc_address("VNC://host.example:5901/") == VncAddress("host.example", 5901)
    assert str(vnc_address("vnc://[::1]:5902")) == "vnc://[::1]:5902"
    for bad in ("vnc://", "vnc://host:port", "vnc://host:5900/x", "vnc://host:99999"):
        with pytest.raises(UsageError, match="expected vnc://HOST"):
            vnc_address(bad)


def test_a_password_in_the_address_is_refused_without_echoing_it() -> None:
    with pytest.raises(UsageError, match="MM_VNC_PASSWORD") as caught:
        vnc_address("vnc://:hunter2@10.0.0.5")
    assert "hunter2" not in str(caught.value)


def test_one_lock_per_server_however_spelled() -> None:
    assert display_key("vnc://localhost:5900") == display_key("vnc://127.0.0.1")
    assert display_key("vnc://10.0.0.5:5901") == "vnc-10.0.0.5-5901"
    assert display_key("vnc://127.0.0.1:5900") != display_key(":0")


def test_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MM_VNC_PASSWORD", raising=False)
    monkeypatch.delenv("MM_VNC_PASSWORD_FILE", raising=False)
    assert vnc_password() is None
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    monkeypatch.setenv("MM_VNC_PASSWORD_FILE", str(secret))
    assert vnc_password() == "from-file"
    monkeypatch.setenv("MM_VNC_PASSWORD", "from-env")
    assert vnc_password() == "from-env"
    monkeypatch.delenv("MM_VNC_PASSWORD")
    secret.write_text("")
    with pytest.raises(UsageError, match="is empty"):
        vnc_password()


def test_key_names_and_characters_as_keysyms() -> None:
    assert keysym("enter") == keysym("Return") == 0xFF0D
    assert keysym("f5") == 0xFFC2 and keysym("ctrl") == 0xFFE3
    assert keysym("a") == 0x61 and keysym("A") == 0x41 and keysym("<") == 0x3C
    assert keysym("é") == 0xE9 and keysym("€") == 0x010020AC
    assert keysym("nosuchkey") is None


def test_vnc_auth_response() -> None:
    # The challenge encrypted under the bit-reversed password, two DES blocks: a zero
    # password gives a zero key, whose DES of a zero block is a known value.
    assert vnc_response("", bytes(16)).hex() == "8ca64de9c1b123a7" * 2
    assert vnc_response("12345678", bytes(16)) == vnc_response("123456789", bytes(16))
