"""The suite passes in a checkout without the team's ``../shared`` folder:
the model-dependent tests build the MiniLM GGUF themselves (as ``memext
model install minilm`` does, from a PyPI wheel) and the LoCoMo tests use the
invented set under tests/data/."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import MODEL_NAME, ROOT

#: A few tests of each way a test reaches the model: a module that imports
#: MODEL_PATH, a fixture building an index (adapters), a test marked ``model``
#: that reads it inside the function, and the LoCoMo format tests.
REPRESENTATIVE = (
    "tests/providers/local/test_model.py::test_semantic_hit_that_keyword_search_misses",
    "tests/memory/test_dates.py::test_a_date_filtered_hybrid_search_with_the_real_model",
    "tests/providers/local/test_hub.py::test_local_provider_downloads_an_hf_model_into_the_cache",
    "tests/freshness/test_supervisor.py::test_a_provider_that_cannot_start_is_the_agents_error",
    "tests/bench/test_locomo.py",
)


def _pytest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def _counts(output: str) -> dict[str, int]:
    summary = output.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|errors|skipped)", summary)}


def test_model_tests_pass_without_the_shared_folder(tmp_path):
    empty_shared, cache = tmp_path / "no-shared", tmp_path / "cache"
    empty_shared.mkdir()
    env = dict(os.environ, MEMEXT_SHARED=str(empty_shared), MEMEXT_TEST_CACHE=str(cache))
    env.pop("PYTEST_ADDOPTS", None)

    # What conftest resolves with no shared data: the cache and the fixture, never /work/shared.
    probe = subprocess.run(
        [sys.executable, "-c", "import conftest; print(conftest.MODEL_PATH); print(conftest.LOCOMO_DEV)"],
        cwd=ROOT / "tests",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [str(cache / MODEL_NAME), str(ROOT / "tests" / "data" / "locomo-mini.json")]

    first = _pytest(env, *REPRESENTATIVE)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    counts = _counts(first.stdout)
    assert counts.get("passed", 0) >= 15 and "skipped" not in counts and "failed" not in counts, first.stdout[-2000:]
    built = cache / MODEL_NAME
    assert built.is_file() and built.stat().st_size > 40_000_000
    assert list(empty_shared.iterdir()) == []

    # A later run finds the cached model and does not build it again.
    stamp = built.stat().st_mtime_ns
    again = _pytest(env, REPRESENTATIVE[0])
    assert again.returncode == 0 and _counts(again.stdout) == {"passed": 1}, again.stdout[-2000:]
    assert built.stat().st_mtime_ns == stamp


def test_parallel_runs_build_the_model_once(tmp_path):
    """Two runs starting together on an empty cache: the lock makes one
    build while the other waits, then uses the same file."""
    cache = tmp_path / "cache"
    code = "import conftest, os; p = conftest.ensure_test_model(); print(p, os.stat(p).st_ino)"
    env = dict(os.environ, MEMEXT_SHARED=str(tmp_path / "no-shared"), MEMEXT_TEST_CACHE=str(cache))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT / "tests", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    lines = {out.strip() for out, _ in outs}
    assert len(lines) == 1 and lines.pop().startswith(str(cache / MODEL_NAME))
    assert sorted(p.name for p in cache.iterdir() if p.suffix == ".gguf") == [MODEL_NAME]
