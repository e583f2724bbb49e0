"""Large payloads travel by reference (the "claim check" pattern), and oversized ones fail loudly.

Temporal refuses a payload over 2 MB (and a workflow history over 50 MB), yet a model request
carries the whole transcript and a tool may return megabytes. `BlobCodec` stores every payload above
`inline_limit` in a content-addressed `BlobStore` (its key is the sha256 of its bytes) and sends a
small reference instead; decoding fetches the bytes back and checks their hash. Without a store,
`PayloadGuard` lets payloads through but stops one above `GUARD_LIMIT` with a message saying what to
do, before the server refuses it less readably.

Every process of a deployment (the client and every worker) must use the same codec and reach the
same store: `FileBlobStore` on one machine, or on a folder all machines share (NFS, SMB, ...);
any other store (S3, a database) plugs in through the `BlobStore` protocol.

What a codec error does depends on where it is raised (read in temporalio 1.35's worker code, and
seen against the dev server):

- on the client (a run's input, its result): the caller gets the exception as raised;
- in an activity worker (a tool's result, a model's answer): the activity fails with it. The
  guard's non-retryable `ApplicationError` fails it at once, without retries; the workflow gets an
  `ActivityError` whose cause carries the advice, also recorded on the `ActivityTaskFailed` event;
- in a workflow worker (the input of the next activity, the run's result): whatever the error,
  the *workflow task* fails ("Failed encoding completion: ..." on a `WorkflowTaskFailed` event and
  in the worker's log) and Temporal retries workflow tasks until the run's execution timeout, if
  any: the caller sees only a timeout. Without any codec, the SDK's own check does the same at
  2 MiB ("[TMPRL1103] Attempted to upload payloads with size that exceeded the error limit").
  Only the workflow's code can turn that into a failed run; a codec cannot.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio.to_thread
from temporalio.api.common.v1 import Payload
from temporalio.converter import PayloadCodec
from temporalio.exceptions import ApplicationError

from agents.errors import RunError

__all__ = [
    "DEFAULT_INLINE_LIMIT",
    "GUARD_LIMIT",
    "REFERENCE_ENCODING",
    "BlobCodec",
    "BlobError",
    "BlobStore",
    "FileBlobStore",
    "PayloadGuard",
    "codec_for",
]

DEFAULT_INLINE_LIMIT = 128 * 1024
"""Payloads above this many bytes go to the blob store (Temporal warns from 512 KiB)."""

GUARD_LIMIT = 3 * 512 * 1024
"""Without a store, payloads above this many bytes (1.5 MiB) are stopped: Temporal refuses 2 MB."""

REFERENCE_ENCODING = b"paor/blob-ref"
"""The `encoding` metadata of a reference payload (its data is the blob's key)."""

_KEY = re.compile(r"[0-9a-f]{64}")


class BlobError(RunError):
    """A referenced blob cannot be used: missing from the store, corrupt, or no store configured."""


@runtime_checkable
class BlobStore(Protocol):
    """Where large payloads are kept, by content: the key is the sha256 (hex) of the data.

    Every process of a deployment must reach the same store. `put` must be idempotent (the same
    key always holds the same bytes) and must not expose partial data to a concurrent `get`.
    """

    async def put(self, key: str, data: bytes) -> None:
        """Keep `data` under `key` (a no-op if it is already there)."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The data under `key`, or None if the store has none."""
        ...


class FileBlobStore:
    """A `BlobStore` in a folder: one file per blob, fanned out by the key's first two characters.

    For workers on several machines the folder must be shared by all of them and by the client
    (NFS, SMB, a mounted bucket): each process reads the blobs the others wrote. Writes are
    atomic (a temporary file in the same folder, then `os.replace`), so a reader never sees half a
    blob, and concurrent writers of the same key are harmless. File IO runs in a worker thread.

    Args:
        path: The folder (created on first write).
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"FileBlobStore({str(self.path)!r})"

    async def put(self, key: str, data: bytes) -> None:
        """Write `data` to the file of `key`, unless it exists."""
        await anyio.to_thread.run_sync(self._put, self._file(key), data)

    async def get(self, key: str) -> bytes | None:
        """The bytes of the file of `key`, or None if there is no such file."""
        return await anyio.to_thread.run_sync(_read, self._file(key))

    def _file(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise BlobError(f"{key!r} is not a blob key (64 lower-case hex digits)")
        return self.path / key[:2] / key

    @staticmethod
    def _put(file: Path, data: bytes) -> None:
        if file.exists():
            return
        file.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temp, file)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _read(file: Path) -> bytes | None:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        return None


class BlobCodec(PayloadCodec):
    """Payloads above `inline_limit` bytes are stored in `store` and sent as references.

    A reference payload has the `encoding` metadata `REFERENCE_ENCODING`, the blob's key as data
    and the stored size in its `size` metadata. The same content is stored once.

    Args:
        store: Where the large payloads go (the same for the client and every worker).
        inline_limit: The largest payload, in serialized bytes, sent inline.
    """

    def __init__(self, store: BlobStore, *, inline_limit: int = DEFAULT_INLINE_LIMIT) -> None:
        self.store = store
        self.inline_limit = inline_limit

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """The payloads, those above the inline limit replaced by references to stored blobs."""
        return [await self._encode(payload) for payload in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """The payloads, references replaced by the payloads they point to.

        Raises:
            BlobError: A blob is missing from the store or does not match its key.
        """
        return [await self._decode(payload) for payload in payloads]

    async def _encode(self, payload: Payload) -> Payload:
        if payload.ByteSize() <= self.inline_limit:
            return payload
        data = payload.SerializeToString(deterministic=True)
        key = hashlib.sha256(data).hexdigest()
        await self.store.put(key, data)
        return Payload(
            metadata={"encoding": REFERENCE_ENCODING, "size": str(len(data)).encode()},
            data=key.encode(),
        )

    async def _decode(self, payload: Payload) -> Payload:
        if not _is_reference(payload):
            return payload
        key = payload.data.decode()
        data = await self.store.get(key)
        if data is None:
            raise BlobError(
                f"blob {key} is not in {self.store!r}: the client and every worker must share"
                " one blob store"
            )
        if hashlib.sha256(data).hexdigest() != key:
            raise BlobError(f"blob {key} in {self.store!r} is corrupt: its sha256 differs")
        return Payload.FromString(data)


class PayloadGuard(PayloadCodec):
    """No store: payloads pass unchanged, but one above `limit` bytes is stopped with advice.

    The error is a non-retryable `ApplicationError` of type "PayloadTooLarge", so an activity
    fails with it at once and a client raises it to the caller; raised while a workflow task
    completes, it fails that task, which Temporal retries (see the module docstring).

    Args:
        limit: The largest payload, in serialized bytes, let through.
    """

    def __init__(self, *, limit: int = GUARD_LIMIT) -> None:
        self.limit = limit

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """The payloads unchanged.

        Raises:
            ApplicationError: A payload is above the limit (type "PayloadTooLarge").
        """
        for payload in payloads:
            size = payload.ByteSize()
            if size > self.limit:
                raise too_large(size)
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        """The payloads unchanged.

        Raises:
            BlobError: A payload is a blob reference, which needs a store to be read.
        """
        for payload in payloads:
            if _is_reference(payload):
                raise BlobError(
                    f"payload is blob {payload.data.decode()}, but no blob store is configured:"
                    " give the client and every worker the same one (connect(..., blobs=DIR))"
                )
        return list(payloads)


def too_large(size: int) -> ApplicationError:
    """The error for a `size`-byte payload that Temporal would refuse."""
    return ApplicationError(
        f"a {size / 1e6:.1f} MB payload is over Temporal's 2 MB limit: give the client and every"
        " worker the same blob store (connect(..., blobs=DIR), paor ... --blobs DIR)",
        type="PayloadTooLarge",
        non_retryable=True,
    )


def codec_for(
    blobs: BlobStore | Path | None, *, inline_limit: int = DEFAULT_INLINE_LIMIT
) -> PayloadCodec:
    """The codec of a deployment: a `BlobCodec` on `blobs` (a folder or a store), else a guard."""
    if blobs is None:
        return PayloadGuard()
    store = blobs if isinstance(blobs, BlobStore) else FileBlobStore(blobs)
    return BlobCodec(store, inline_limit=inline_limit)


def _is_reference(payload: Payload) -> bool:
    return payload.metadata.get("encoding") == REFERENCE_ENCODING
