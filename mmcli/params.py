"""Params and secrets: named values substituted into typed text and the agent's command.

A param's value may be written into a recording only as a `{{key}}` placeholder (or as a
digest that recognizes it, never shows it: `value_digest`); a secret's value is never
written anywhere. Both reach a fallback agent as `MM_PARAM_<KEY>` environment variables,
and where the recorded command held them, in its arguments.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mmcli.errors import UsageError
from mmcli.model import PLACEHOLDER, escape_braces

KEY = re.compile(r"[A-Za-z0-9_]+")


def listed(params: Mapping[str, str]) -> str:
    """Params as people read them, in their order: `key=value`, quoted as a shell would
    need."""
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in params.items())


@dataclass(frozen=True)
class Values:
    params: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def all(self) -> dict[str, str]:
        return {**self.params, **self.secrets}

    def env(self) -> dict[str, str]:
        return {f"MM_PARAM_{k.upper()}": v for k, v in self.all.items()}

    def merged(self, other: Mapping[str, str], secret: Iterable[str] = ()) -> Values:
        """These values with `other`'s on top; keys that are secrets here or named in
        `secret` (a recording's secrets) stay secrets."""
        hidden = set(self.secrets) | set(secret)
        return Values(
            {**{k: v for k, v in self.params.items() if k not in other}}
            | {k: v for k, v in other.items() if k not in hidden},
            {**self.secrets, **{k: v for k, v in other.items() if k in hidden}},
        )

    def missing(self, needed: Iterable[str]) -> list[str]:
        have = self.all
        return sorted(k for k in needed if k not in have)


def _key(key: str, option: str) -> str:
    if not KEY.fullmatch(key):
        raise UsageError(f"{option}: invalid key {key!r} (letters, digits and '_' only)")
    return key


def parse_params(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--param {item!r}: expected KEY=VALUE")
        out[_key(key, "--param")] = value
    return out


def parse_secrets(items: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`KEY=VALUE`, or `KEY` alone with the value read from env `MM_SECRET_<KEY>`."""
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        _key(key, "--secret")
        if not sep:
            var = f"MM_SECRET_{key.upper()}"
            if var not in env:
                raise UsageError(f"--secret {key}: set {var} or pass {key}=VALUE")
            value = env[var]
        if not value:
            raise UsageError(f"--secret {key}: the value is empty")
        out[key] = value
    return out


def parse_values(params: Iterable[str], secrets: Iterable[str]) -> Values:
    p, s = parse_params(params), parse_secrets(secrets)
    both = sorted(set(p) & set(s))
    if both:
        raise UsageError(f"{both[0]!r} is given both as --param and as --secret")
    return Values(p, s)


def parametrize(text: str, values: Mapping[str, str]) -> str:
    """Replace each param value in typed text with its `{{key}}` placeholder, longest
    value first so that one value inside another does not split it."""
    if not text:
        return text
    for key, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        if value:
            text = text.replace(value, "{{" + key + "}}")
    return text


FRAGMENT = 4
"""A piece of a secret this long (or the whole secret, if shorter) counts as a leak."""


def fragments(value: str, size: int = FRAGMENT) -> set[str]:
    """Every piece of `value` of `size` characters (the value itself when shorter)."""
    if len(value) <= size:
        return {value}
    return {value[i : i + size] for i in range(len(value) - size + 1)}


def leaked_in(text: str, secrets: Mapping[str, str]) -> str | None:
    """The key of a secret a piece of which is in `text` (placeholders aside), or None."""
    bare = PLACEHOLDER.sub("\0", text)
    for key, value in secrets.items():
        if value and any(f in bare for f in fragments(value)):
            return key
    return None


OPTION_VALUE = re.compile(r"(-{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*=)(.*)", re.DOTALL)
"""An argument that gives an option its value in one word: `--name=John Smith`."""


def template_command(command: Sequence[str], values: Values) -> list[str]:
    """The agent command as a recording keeps it: an argument that is a param's value, or
    an option's value in one word (`--name=John Smith`), becomes `{{key}}` (the program
    itself aside); a secret's value becomes `{{key}}` wherever it is. A value elsewhere
    inside an argument (a shell script's text) stays: replacing it there could let a
    value change what the script does. A literal `{{` the user wrote is escaped
    (`escape_braces`): only the placeholders put here are filled at a replay."""
    by_value = {v: k for k, v in sorted(values.params.items(), key=lambda kv: kv[0]) if v}
    out: list[str] = []
    for index, arg in enumerate(command):
        option = OPTION_VALUE.fullmatch(arg) if index > 0 else None
        if index > 0 and arg in by_value:
            out.append("{{" + by_value[arg] + "}}")
        elif option is not None and option[2] in by_value:
            out.append(_escaped(option[1], values.secrets) + "{{" + by_value[option[2]] + "}}")
        else:
            out.append(_escaped(arg, values.secrets))
    return out


def _escaped(text: str, secrets: Mapping[str, str]) -> str:
    """`text` with each secret's value as its placeholder and every other `{{` escaped.
    (An argument holds no NUL: it marks where a placeholder goes while `{{` is escaped.)"""
    marked = text
    for key, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
        if value:
            marked = marked.replace(value, f"\0{key}\0")
    return re.sub("\0([A-Za-z0-9_]+)\0", r"{{\1}}", escape_braces(marked))


DIGEST_HEX = 16
DIGEST = re.compile(r"([1-9][0-9]{0,5}):([0-9a-f]{16})")
"""A `value_digest`: the value's length, then `DIGEST_HEX` hex digits."""


def value_digest(key: str, value: str) -> str:
    """`LENGTH:HEX`: recognizes `value` typed again (`find_digest`) without keeping it."""
    digest = hashlib.sha256(f"{key}\0{value}".encode()).hexdigest()[:DIGEST_HEX]
    return f"{len(value)}:{digest}"


def find_digest(text: str, key: str, digests: Iterable[str]) -> str | None:
    """The piece of `text` whose digest (for `key`) is among `digests`, or None."""
    wanted: dict[int, set[str]] = {}
    for d in digests:
        m = DIGEST.fullmatch(d)
        if m is not None:
            wanted.setdefault(int(m[1]), set()).add(d)
    for length, known in wanted.items():
        for i in range(len(text) - length + 1):
            piece = text[i : i + length]
            if value_digest(key, piece) in known:
                return piece
    return None
