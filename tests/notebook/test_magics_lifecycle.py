"""%memforget, %memconsolidate, the labels of retired results and a
workspace gone, through a real IPython InteractiveShell over real files
and a keyword-only index."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from IPython.core.error import UsageError
from memext_helpers import display_html, ipython_shell, write_config

from memext.magics import MemExt


@pytest.fixture
def ip(tmp_path, workspace, monkeypatch):
    path = write_config(tmp_path / "memext", {"small": workspace})
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    with ipython_shell() as shell:
        shell.run_line_magic("load_ext", "memext")
        yield shell


def magics(shell) -> MemExt:
    return shell.magics_manager.registry["MemExt"]


def test_memforget_marks_the_entry_and_search_labels_it(ip, workspace, capsys):
    ip.run_line_magic("memforget", "-a small MEMORY.md:5 switched to coffee")
    assert capsys.readouterr().out.strip() == "forgot MEMORY.md:5 (switched to coffee)"
    assert "<!-- memext forgotten=" in (workspace / "MEMORY.md").read_text(encoding="utf-8").splitlines()[4]
    assert len(ip.run_line_magic("memsearch", "-a small green tea")) == 0
    shown = ip.run_line_magic("memsearch", "-a small --all green tea")
    assert shown[0].status == "forgotten"
    html = shown.to_html()
    assert 'class="memext-mark memext-mark-forgotten"' in html and ">forgotten</span>" in html
    assert "var(--jp-content-font-color1,inherit)" in html.split("memext-mark-forgotten")[1][:400]  # the main text colour
    assert "[forgotten]" in shown.to_text()
    ip.run_line_magic("memforget", "-a small MEMORY.md:5")
    assert "MEMORY.md:5 was already marked; left as it is" in capsys.readouterr().out
    with pytest.raises(UsageError, match="PATH:LINE"):
        ip.run_line_magic("memforget", "-a small MEMORY.md")


def test_a_forgotten_entry_beside_a_result_shows_as_forgotten(ip, workspace):
    ip.run_line_magic("memforget", "-a small MEMORY.md:5")
    shown = ip.run_line_magic("memsearch", "-a small Anna tech lead billing")
    assert shown[0].citation.startswith("MEMORY.md:4")
    html, text = shown.to_html(), shown.to_text()
    assert "green tea" not in html and "green tea" not in text
    assert "⋮ forgotten" in html and "5  ⋮ forgotten" in text


def test_memconsolidate_shows_the_diff_and_applies_it_on_a_click(ip, workspace):
    ip.run_line_magic("memindex", "-a small")
    idx = magics(ip).session.index("small")
    view = ip.run_line_magic("memconsolidate", "-a small")
    assert "nothing to consolidate" in view.body.value and view.apply_button.disabled
    now = datetime.now()
    for days_ago in (2, 1):  # an agent's searches on two days
        assert idx.search("quarterly roadmap", now=now - timedelta(days=days_ago)).confident
    view = ip.run_line_magic("memconsolidate", "-a small")
    assert [f.source for f in view.proposal.facts] == ["memory/2026-01-06.md:4"]
    assert (
        "+- Planned the quarterly roadmap with Anna. &lt;!-- memext date=2026-01-06 from=memory/2026-01-06.md:4 --&gt;" in view.body.value
    )
    assert not view.apply_button.disabled
    before = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    view.apply_button.click()
    after = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert after.startswith(before) and after.endswith(
        "- Planned the quarterly roadmap with Anna. <!-- memext date=2026-01-06 from=memory/2026-01-06.md:4 -->\n"
    )
    assert "appended 1 line(s) to MEMORY.md:11" in view.outcome.value and view.apply_button.disabled
    view.apply_button.click()  # once only
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == after
    assert ip.run_line_magic("memsearch", "-a small quarterly roadmap")[0].origin == "consolidated"


def test_a_workspace_moved_away_is_an_error_message_not_an_empty_answer(ip, workspace, tmp_path):
    """%memsearch, %memget, %%memnote and %memstatus say the folder is gone
    (one line, the CLI's words), never "no memory matches"; the index keeps
    its files, and with the folder back the search answers again."""
    session = magics(ip).session
    assert [r.path for r in ip.run_line_magic("memsearch", "-a small Anna")]  # indexed
    assert session.index("small").status().total_files == 3
    workspace.rename(tmp_path / "elsewhere")
    named = f"workspace {workspace} of agent small does not exist"
    for call in (
        lambda: ip.run_line_magic("memsearch", "-a small Anna"),
        lambda: ip.run_line_magic("memget", "-a small MEMORY.md"),
        lambda: ip.run_cell_magic("memnote", "-a small", "A heron at the weir."),
    ):
        with pytest.raises(UsageError) as refused:
            call()
        assert str(refused.value).startswith(f"memext: {named}")
    assert not workspace.exists()
    table = ip.run_line_magic("memstatus", "-a small")
    assert named in repr(table) and named in display_html(ip, table)
    assert session.index("small").status().total_files == 3
    (tmp_path / "elsewhere").rename(workspace)
    assert [r.path for r in ip.run_line_magic("memsearch", "-a small Anna")]
