"""A store in a bucket on any S3-compatible server (`--store s3://BUCKET/PREFIX`).

Credentials, region and endpoint come from the standard AWS environment variables
(`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or
`AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL` for a server other than AWS); an `http://`
endpoint is allowed (a server on this machine or a private network). The client is
`obstore` (Rust's `object_store`): conditional writes map to `If-None-Match: *` (create)
and `If-Match: ETAG` (replace a known version). Whether a server honours them is checked
by `mm doctor --store s3://...` (`mmcli.store.conditions`): some accept the headers and
ignore them.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from typing import Any, cast
from urllib.parse import urlsplit

from mmcli.errors import StoreError
from mmcli.store.objects import Blob, Exists, Info, Objects, Stale, check_key

SCHEME = "s3://"
TIMEOUT = timedelta(seconds=20)
RETRIES = 3


def is_s3(location: object) -> bool:
    return isinstance(location, str) and location.startswith(SCHEME)


def split_url(url: str) -> tuple[str, str]:
    """`s3://bucket/some/prefix` -> ("bucket", "some/prefix"); `StoreError` when the
    bucket is missing or the prefix holds an empty, `.` or `..` part."""
    parts = urlsplit(url)
    bucket, prefix = parts.netloc, parts.path.strip("/")
    if parts.scheme != "s3" or not bucket or parts.query or parts.fragment:
        raise StoreError(f"not a store URL: {url!r} (use s3://BUCKET or s3://BUCKET/PREFIX)")
    if prefix:
        check_key(prefix)
    return bucket, prefix


def _endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


class S3Objects(Objects):
    """Objects under `PREFIX/` in `BUCKET`; see `mmcli.store.objects` for the contract."""

    def __init__(self, url: str) -> None:
        try:
            import obstore.store
        except ImportError:
            raise StoreError(f"{url}: an S3 store needs obstore: pip install 'mmcli[s3]'") from None
        self.bucket, self.prefix = split_url(url)
        self.where = f"{SCHEME}{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")
        config: dict[str, Any] = {}
        endpoint = _endpoint()
        if endpoint:
            config["endpoint"] = endpoint
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        config["region"] = region or "us-east-1"
        client: dict[str, Any] = {"timeout": TIMEOUT, "connect_timeout": timedelta(seconds=5)}
        if endpoint and endpoint.startswith("http://"):
            client["allow_http"] = True
        try:
            self._store = obstore.store.S3Store(
                self.bucket,
                prefix=self.prefix or None,
                config=cast("Any", config),
                client_options=cast("Any", client),
                retry_config={
                    "max_retries": RETRIES,
                    "retry_timeout": TIMEOUT,
                    "backoff": {
                        "init_backoff": timedelta(milliseconds=100),
                        "max_backoff": timedelta(seconds=2),
                        "base": 2,
                    },
                },
            )
        except Exception as e:  # obstore raises its own types for a bad configuration
            raise StoreError(f"{self.where}: cannot open ({_reason(e)})") from None

    def _fail(self, key: str, what: str, e: Exception) -> StoreError:
        return StoreError(f"{self.url(key)}: cannot {what} ({_reason(e)})")

    def get(self, key: str, limit: int | None = None) -> Blob:
        import obstore

        check_key(key)
        try:
            if limit is None:
                result = obstore.get(self._store, key)
                data = bytes(result.bytes())
            else:
                result = obstore.get(self._store, key, options={"range": (0, limit + 1)})
                data = bytes(result.bytes())
        except FileNotFoundError:
            raise
        except Exception as e:
            if _missing(e):
                raise FileNotFoundError(self.url(key)) from None
            raise self._fail(key, "read", e) from None
        return Blob(data, result.meta["e_tag"] or "")

    def head(self, key: str) -> Info | None:
        import obstore

        check_key(key)
        try:
            meta = obstore.head(self._store, key)
        except FileNotFoundError:
            return None
        except Exception as e:
            if _missing(e):
                return None
            raise self._fail(key, "read", e) from None
        return _info(meta)

    def put(self, key: str, data: bytes, *, create: bool = False, match: str | None = None) -> str:
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        check_key(key)
        mode: Any = "create" if create else ({"e_tag": match} if match is not None else "overwrite")
        try:
            result = obstore.put(self._store, key, data, mode=mode, use_multipart=False)
        except AlreadyExistsError:
            raise Exists(f"{self.url(key)}: already exists") from None
        except PreconditionError:
            raise Stale(f"{self.url(key)}: changed since it was read") from None
        except FileNotFoundError:
            if match is not None:  # a conditional replace of an object that went away
                raise Stale(f"{self.url(key)}: removed since it was read") from None
            raise self._fail(key, "write", FileNotFoundError("no such bucket")) from None
        except Exception as e:
            raise self._fail(key, "write", e) from None
        return str(result.get("e_tag") or "")

    def delete(self, key: str) -> None:
        import obstore

        check_key(key)
        try:
            obstore.delete(self._store, key)
        except FileNotFoundError:
            pass
        except Exception as e:
            if not _missing(e):
                raise self._fail(key, "delete", e) from None

    def listing(self, prefix: str = "") -> list[Info]:
        import obstore

        base = prefix.rpartition("/")[0]  # the listing's own prefix is whole parts
        try:
            batches = obstore.list(self._store, base or None)
            found = [_info(m) for batch in batches for m in batch]
        except Exception as e:
            raise self._fail(prefix or "", "list", e) from None
        return sorted((i for i in found if i.key.startswith(prefix)), key=lambda i: i.key)


def _info(meta: Any) -> Info:
    return Info(
        str(meta["path"]),
        int(meta["size"]),
        meta["last_modified"].timestamp(),
        str(meta.get("e_tag") or ""),
    )


def _missing(e: Exception) -> bool:
    return type(e).__name__ == "NotFoundError"


STATUS = re.compile(r"status code: (\d{3})")


def _reason(e: Exception) -> str:
    """What went wrong, in a few words a user can act on; obstore's errors run to a page
    of debug output."""
    text = str(e)
    status = STATUS.search(text)
    if status is not None:
        code = status.group(1)
        hint = {
            "403": "access denied: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            "404": "no such bucket",
            "400": "the server refused the request (a bucket name it does not accept?)",
        }.get(code, "the server answered an error")
        return f"{hint}; HTTP {code}"
    if "error sending request" in text or "Connection refused" in text or "timed out" in text:
        endpoint = _endpoint() or "AWS"
        return f"cannot reach the server at {endpoint} (after {RETRIES} retries)"
    lines = text.strip().splitlines()
    first = lines[0] if lines else type(e).__name__
    return first.removeprefix("Generic S3 error: ")[:300]
