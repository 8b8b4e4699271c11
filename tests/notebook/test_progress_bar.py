"""Progress display for %memindex: the widget bar and the text bar, fed by a
real sync."""

from __future__ import annotations

import io

import pytest
from conftest import make_agent

from memext.engine import MemoryIndex, SyncProgress
from memext.progress_bar import TextProgress, WidgetProgress, progress_for


def test_widget_bar_follows_a_real_sync(example_workspace, capsys):
    seen: list[SyncProgress] = []
    with MemoryIndex(make_agent(example_workspace, provider="none"), provider=None) as idx:
        with WidgetProgress("example") as bar:
            idx.sync(progress=lambda p: (seen.append(p), bar(p)))
    assert seen[-1].phase == "done"
    assert bar.bar.max == max(1, seen[-1].chunks_total) and bar.bar.value == bar.bar.max
    assert bar.bar.bar_style == "success" and bar.text.value == "done"


def test_widget_bar_shows_failure():
    with pytest.raises(RuntimeError):
        with WidgetProgress("x") as bar:
            bar(SyncProgress("embed", 1, 4, 10, 40, 1.0, 3.0))
            assert bar.bar.max == 40 and bar.bar.value == 10 and "about 3 s left" in bar.text.value
            raise RuntimeError("boom")
    assert bar.bar.bar_style == "danger" and bar.text.value == "failed"


def test_text_bar_writes_to_its_stream(example_workspace):
    out = io.StringIO()
    with MemoryIndex(make_agent(example_workspace, provider="none"), provider=None) as idx:
        with TextProgress("example", stream=out) as bar:
            idx.sync(progress=bar)
    text = out.getvalue()
    assert "example: done (15/15 files)" in text and "16/16" in text and "chunks" in text


def test_a_shell_without_a_kernel_gets_the_text_bar():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert isinstance(progress_for(shell, "a"), TextProgress)
    finally:
        InteractiveShell.clear_instance()


def test_one_description_of_progress_for_every_face():
    from memext.engine.for_faces import describe_progress

    assert describe_progress(SyncProgress("scan", 200, 1000)) == "scanning 200/1000 files"
    assert describe_progress(SyncProgress("embed", 3, 9, 40, 120, 2.0, 12.4, rebuild=True)) == (
        "rebuilding: embedding 40/120 chunks, about 12 s left"
    )
    assert describe_progress(SyncProgress("write", 5, 9, eta_s=0.4)) == "indexing 5/9 files"  # under a second: no ETA
    assert describe_progress(SyncProgress("done", 15, 15, 16, 16, rebuild=True)) == "done (15/15 files)"
