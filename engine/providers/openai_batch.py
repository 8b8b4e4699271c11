"""Document embeddings through the OpenAI Batch API (``remote.batch``, DESIGN.md §6).

One sync is one job, whatever the number of files: the provider sets
``batch_group_size = None`` so the engine hands over every text that needs
embedding in one call. The texts become one JSONL file (one
``/v1/embeddings`` request per text, ``custom_id`` = a hash of model and
text), which is uploaded; a batch is created, polled with growing intervals
(``poll_interval_ms``) until it ends or ``timeout_minutes`` pass (one
deadline for the whole call, its requests included; with ``wait = false``
the submitting and collecting requests get the embedding deadline), and its
output file is downloaded and mapped back by ``custom_id`` (output order is
not the input order). Above the Batch API's limits (50,000 requests or
about 200 MB per file) the texts are split into several jobs, at most
``concurrency`` of them in flight.

A job that fails, expires, times out or comes back incomplete counts as a
failure; the caller embeds those texts inline instead. After
:data:`FAILURE_LIMIT` failures the batch path is off for the rest of the
process (``active`` is False) and :meth:`status` says why.

With ``wait = false`` a sync does not block on a job: the job is submitted
and remembered in a small state file, :class:`BatchPending` is raised (the
sync indexes those files keyword-only for now), and a later sync collects
the finished job's vectors by ``custom_id`` before submitting anything new.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import EmbeddingsPending, ProviderError
from ..paths import private_dir, write_private_text
from ..settings import BatchSettings
from ..status import BatchJob, BatchStatus
from .base import EmbedProgress
from .retry import Deadline

log = logging.getLogger("memext")

BATCH_ENDPOINT = "/v1/embeddings"
COMPLETION_WINDOW = "24h"
#: Failed jobs after which the batch path is off for the rest of the process.
FAILURE_LIMIT = 2
#: The Batch API's limits per input file (requests, bytes; 200 MB less a margin).
MAX_REQUESTS_PER_JOB = 50_000
MAX_JOB_BYTES = 190 * 1024 * 1024
#: Polling starts at ``poll_interval_ms`` and grows by this factor up to
#: MAX_POLL_INTERVAL_S (never below the configured interval).
POLL_BACKOFF = 1.5
MAX_POLL_INTERVAL_S = 60.0
#: Cancelling a job that ran out its time gets this long.
CANCEL_DEADLINE_S = 30.0
_ENDED_BADLY = ("failed", "expired", "cancelled", "cancelling")

#: ``call(fn, what, deadline)`` runs one API call under the provider's
#: retry policy, ending when ``deadline`` passes however the server answers.
Caller = Callable[[Callable[[], Any], str, Deadline], Any]


class BatchFailed(ProviderError):
    """A batch job failed, expired, timed out or came back incomplete."""


class BatchPending(EmbeddingsPending):
    """``wait = false``: jobs were submitted and their results are not in yet."""


class BatchClosed(ProviderError):
    """The provider was closed while a job was being waited for."""


@dataclass
class JobState:
    """One batch job while it runs (:meth:`OpenAIBatchEmbedder.status` reports a frozen copy)."""

    id: str
    status: str
    requests: int
    completed: int = 0
    failed: int = 0


def custom_id(model: str, text: str) -> str:
    """Stable per (model, text): a later process can match a job's output."""
    return "memext-" + hashlib.sha256(f"{model}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:40]


def decode_embedding(raw: Any) -> list[float]:
    """An embedding as floats, from a float list or base64 little-endian float32."""
    if isinstance(raw, str):
        return np.frombuffer(base64.b64decode(raw), dtype="<f4").astype(float).tolist()
    if isinstance(raw, list) and raw:
        return [float(x) for x in raw]
    raise ValueError("empty or malformed embedding")


class OpenAIBatchEmbedder:
    """Runs embedding jobs through the Batch API and remembers how it went."""

    def __init__(
        self,
        client,
        model: str,
        settings: BatchSettings,
        *,
        call: Caller,
        state_file: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_requests_per_job: int = MAX_REQUESTS_PER_JOB,
        max_job_bytes: int = MAX_JOB_BYTES,
        max_poll_interval_s: float = MAX_POLL_INTERVAL_S,
        failure_limit: int = FAILURE_LIMIT,
        redact: Callable[[str], str] = str,
        request_deadline_s: float = 300.0,
    ):
        self._client = client
        #: With ``wait = false`` an embed call only submits and collects
        #: jobs: its requests together get this long (the embedding deadline).
        self._request_deadline_s = request_deadline_s
        self._redact = redact
        self.model = model
        self.settings = settings
        self._call = call
        self._state_file = state_file
        # Waits end early when the provider is closed (the index is closing).
        self._closed = threading.Event()
        self._sleep = sleep or self._closed.wait
        self._clock = clock
        self._max_requests = max_requests_per_job
        self._max_bytes = max_job_bytes
        self._max_poll = max(max_poll_interval_s, settings.poll_interval_ms / 1000.0)
        self.failure_limit = failure_limit
        self.failures = 0
        self.active = True
        self.disabled_reason: str | None = None
        self.last_error: str | None = None
        self.jobs_completed = 0
        self._jobs: list[JobState] = []
        self._lock = threading.Lock()

    # -- public ----------------------------------------------------------------

    def embed(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        """One vector per text, in order. Raises BatchFailed (counted) or BatchPending."""
        ids = [custom_id(self.model, t) for t in texts]
        todo = dict(zip(ids, texts))
        # One deadline for the whole call, its requests included (a server
        # trickling an upload's answer must not hold the sync past it).
        if self.settings.wait:
            deadline = Deadline(self.settings.timeout_minutes * 60.0, "batch timeout (remote.batch.timeout_minutes)", self._clock)
        else:
            deadline = Deadline(self._request_deadline_s, "embedding deadline (remote.deadline_ms)", self._clock)
        try:
            vectors = self._collect_pending(todo, deadline) if not self.settings.wait else {}
            missing = {cid: t for cid, t in todo.items() if cid not in vectors}
            if missing and self.settings.wait:
                vectors.update(self._run_jobs(missing, len(todo) - len(missing), len(todo), progress, deadline))
            elif missing:
                self._submit_pending(missing, deadline)
        except (BatchPending, BatchClosed):
            raise
        except Exception as exc:
            if self._closed.is_set():  # a request cut off by close(): not the Batch API's failure
                raise BatchClosed(f"stopped waiting for OpenAI batch jobs: the index is closing ({exc})") from exc
            self._record_failure(exc)
            if isinstance(exc, BatchFailed):
                exc.args = (self._redact(str(exc)),)
                raise
            raise BatchFailed(self._redact(f"OpenAI batch embedding failed: {exc}")) from exc
        return [vectors[cid] for cid in ids]

    def close(self) -> None:
        """Stop waiting for jobs (they keep running at OpenAI)."""
        self._closed.set()

    def status(self) -> BatchStatus:
        """Failures so far, whether batching is still on, and the jobs."""
        pending = tuple(j["id"] for j in self._load_state()) if not self.settings.wait else ()
        with self._lock:
            jobs = tuple(BatchJob(j.id, j.status, j.requests, j.completed, j.failed) for j in self._jobs)
            return BatchStatus(
                active=self.active,
                mode="batch" if self.active else "inline",
                wait=self.settings.wait,
                failures=self.failures,
                failure_limit=self.failure_limit,
                last_error=self.last_error,
                disabled_reason=self.disabled_reason,
                jobs_completed=self.jobs_completed,
                jobs=jobs,
                pending=pending,
            )

    # -- failures ----------------------------------------------------------------

    def _record_failure(self, exc: Exception) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = self._redact(str(exc)) or type(exc).__name__
            if self.failures >= self.failure_limit and self.active:
                self.active = False
                self.disabled_reason = (
                    f"the Batch API failed {self.failures} times (last: {self.last_error}); "
                    "inline embedding requests for the rest of this process"
                )
        log.warning("OpenAI batch failed (%d of %d allowed): %s", self.failures, self.failure_limit, self.last_error)

    # -- jobs ----------------------------------------------------------------------

    def _split(self, todo: dict[str, str]) -> list[list[tuple[str, bytes]]]:
        """JSONL lines grouped into jobs under the request and size limits."""
        jobs: list[list[tuple[str, bytes]]] = []
        current: list[tuple[str, bytes]] = []
        size = 0
        for cid, text in todo.items():
            line = (
                json.dumps(
                    {
                        "custom_id": cid,
                        "method": "POST",
                        "url": BATCH_ENDPOINT,
                        "body": {"model": self.model, "input": text, "encoding_format": "base64"},
                    },
                    ensure_ascii=False,
                ).encode("utf-8", "replace")
                + b"\n"
            )
            if current and (len(current) >= self._max_requests or size + len(line) > self._max_bytes):
                jobs.append(current)
                current, size = [], 0
            current.append((cid, line))
            size += len(line)
        if current:
            jobs.append(current)
        return jobs

    def _run_jobs(
        self, todo: dict[str, str], already: int, total: int, progress: EmbedProgress | None, deadline: Deadline
    ) -> dict[str, list[float]]:
        jobs = self._split(todo)
        done_per_job = [0] * len(jobs)
        with self._lock:
            self._jobs = []

        def report(k: int, completed: int) -> None:
            with self._lock:
                done_per_job[k] = completed
                done = already + sum(done_per_job)
            if progress is not None:
                progress(min(done, total), total)

        def one(k: int) -> dict[str, list[float]]:
            job = self._submit(jobs[k], deadline)
            job = self._wait(job, deadline, lambda n: report(k, n))
            out = self._results(job, {cid for cid, _ in jobs[k]}, deadline)
            report(k, len(jobs[k]))
            return out

        vectors: dict[str, list[float]] = {}
        if len(jobs) == 1:
            vectors.update(one(0))
        else:
            with ThreadPoolExecutor(max_workers=min(self.settings.concurrency, len(jobs)), thread_name_prefix="memext-batch") as pool:
                for part in pool.map(one, range(len(jobs))):
                    vectors.update(part)
        return vectors

    def _submit(self, lines: list[tuple[str, bytes]], deadline: Deadline):
        payload = b"".join(line for _, line in lines)
        uploaded = self._call(
            lambda: self._client.files.create(file=("memext-embeddings.jsonl", payload, "application/jsonl"), purpose="batch"),
            "batch input upload",
            deadline,
        )
        batch = self._call(
            lambda: self._client.batches.create(
                input_file_id=uploaded.id,
                endpoint=BATCH_ENDPOINT,
                completion_window=COMPLETION_WINDOW,
                metadata={"source": "memext", "requests": str(len(lines))},
            ),
            "batch create",
            deadline,
        )
        log.info("OpenAI batch %s submitted: %d embedding requests", batch.id, len(lines))
        with self._lock:
            self._jobs.append(JobState(batch.id, batch.status, len(lines)))
        return batch

    def _track(self, batch) -> None:
        counts = batch.request_counts
        with self._lock:
            for j in self._jobs:
                if j.id == batch.id:
                    j.status = batch.status
                    if counts is not None:
                        j.completed, j.failed = counts.completed, counts.failed

    def _wait(self, batch, deadline: Deadline, on_count: Callable[[int], None]):
        interval = self.settings.poll_interval_ms / 1000.0
        while True:
            self._track(batch)
            if batch.request_counts is not None:
                on_count(batch.request_counts.completed)
            if batch.status == "completed":
                with self._lock:
                    self.jobs_completed += 1
                return batch
            if batch.status in _ENDED_BADLY:
                raise BatchFailed(f"OpenAI batch {batch.id} {batch.status}{_batch_errors(batch)}")
            if deadline.passed:
                raise self._timed_out(batch)
            self._sleep(min(interval, deadline.remaining()))
            if self._closed.is_set():
                raise BatchClosed(f"stopped waiting for OpenAI batch {batch.id}: the index is closing")
            if deadline.passed:  # no status request past the deadline
                raise self._timed_out(batch)
            interval = min(interval * POLL_BACKOFF, self._max_poll)
            batch_id = batch.id
            batch = self._call(lambda: self._client.batches.retrieve(batch_id), "batch status", deadline)

    def _timed_out(self, batch) -> BatchFailed:
        """The job ran out its time: cancelled (with a short deadline of its own), and the error to raise."""
        cancel = Deadline(CANCEL_DEADLINE_S, "cancel deadline", self._clock)
        try:
            self._call(lambda: self._client.batches.cancel(batch.id), "batch cancel", cancel)
        except ProviderError as exc:  # the timeout is the error to report
            log.warning("could not cancel OpenAI batch %s: %s", batch.id, exc)
        return BatchFailed(
            f"OpenAI batch {batch.id} did not finish within {self.settings.timeout_minutes:g} minutes "
            f"(remote.batch.timeout_minutes; it was {batch.status}); it was cancelled"
        )

    def _download(self, file_id: str, deadline: Deadline) -> str:
        return self._call(lambda: self._client.files.content(file_id).text, "batch output download", deadline)

    def _results(self, batch, wanted: set[str], deadline: Deadline) -> dict[str, list[float]]:
        """Vectors by custom_id from the output file; missing ones fail the job."""
        vectors: dict[str, list[float]] = {}
        errors: dict[str, str] = {}
        if batch.output_file_id:
            _parse_output(self._download(batch.output_file_id, deadline), vectors, errors)
        missing = wanted - vectors.keys()
        if missing and batch.error_file_id:
            _parse_output(self._download(batch.error_file_id, deadline), vectors, errors)
        missing = wanted - vectors.keys()
        if missing:
            first = next((errors[c] for c in sorted(missing) if c in errors), "no output line for them")
            raise BatchFailed(f"OpenAI batch {batch.id} returned no embedding for {len(missing)} of {len(wanted)} texts: {first}")
        return {cid: vectors[cid] for cid in wanted}

    # -- wait = false: jobs outlive the sync that submitted them ---------------

    def _load_state(self) -> list[dict]:
        if self._state_file is None or not self._state_file.is_file():
            return []
        try:
            return list(json.loads(self._state_file.read_text(encoding="utf-8")).get("jobs", []))
        except (OSError, ValueError, AttributeError):
            return []  # a damaged state file only loses the chance to reuse a job

    def _save_state(self, jobs: list[dict]) -> None:
        if self._state_file is None:
            return
        private_dir(self._state_file.parent)
        write_private_text(self._state_file, json.dumps({"jobs": jobs}))

    def _collect_pending(self, todo: dict[str, str], deadline: Deadline) -> dict[str, list[float]]:
        """Vectors from earlier jobs that have finished; still-running ones stay listed."""
        vectors: dict[str, list[float]] = {}
        keep: list[dict] = []
        for entry in self._load_state():
            batch = self._call(lambda: self._client.batches.retrieve(entry["id"]), "batch status", deadline)
            if batch.status == "completed":
                errors: dict[str, str] = {}
                found: dict[str, list[float]] = {}
                if batch.output_file_id:
                    _parse_output(self._download(batch.output_file_id, deadline), found, errors)
                vectors.update({cid: v for cid, v in found.items() if cid in todo})
                with self._lock:
                    self.jobs_completed += 1
            elif batch.status in _ENDED_BADLY:
                self._record_failure(BatchFailed(f"OpenAI batch {batch.id} {batch.status}{_batch_errors(batch)}"))
            else:
                keep.append(entry)
        self._save_state(keep)
        return vectors

    def _submit_pending(self, missing: dict[str, str], deadline: Deadline) -> None:
        state = self._load_state()
        running = {cid for entry in state for cid in entry.get("ids", [])}
        new = {cid: t for cid, t in missing.items() if cid not in running}
        for lines in self._split(new) if new else []:
            batch = self._submit(lines, deadline)
            state.append({"id": batch.id, "ids": [cid for cid, _ in lines]})
            self._save_state(state)
        waiting = [e["id"] for e in state]
        raise BatchPending(
            f"OpenAI batch {', '.join(waiting)} is running ({len(missing)} texts); remote.batch.wait = false, "
            "so a later sync collects the results (set remote.batch.wait = true to wait for them)"
        )


def _batch_errors(batch) -> str:
    errs = getattr(batch, "errors", None)
    data = getattr(errs, "data", None) or []
    messages = [e.message for e in data if getattr(e, "message", None)]
    return f": {'; '.join(messages[:3])}" if messages else ""


def _parse_output(text: str, vectors: dict[str, list[float]], errors: dict[str, str]) -> None:
    """Read output/error JSONL lines into vectors or error messages by custom_id."""
    for raw in text.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        cid = line.get("custom_id")
        if not isinstance(cid, str):
            continue
        if line.get("error"):
            errors[cid] = str((line["error"] or {}).get("message") or line["error"])
            continue
        response = line.get("response") or {}
        body = response.get("body") or {}
        status = response.get("status_code", 200)
        if status >= 400 or "error" in body:
            err = body.get("error") if isinstance(body, dict) else None
            errors[cid] = f"HTTP {status}: {(err or {}).get('message') if isinstance(err, dict) else body}"
            continue
        try:
            data = body["data"]
            vectors[cid] = decode_embedding(data[0]["embedding"])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            errors[cid] = f"malformed output line: {exc}"
