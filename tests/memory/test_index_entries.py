"""A memory file cut into its entries (engine/memory/index_entries.py)."""

from memext.engine.memory.index_entries import EntryText, markdown_entries, transcript_entries


def test_entries_are_list_items_and_paragraphs_without_headings_or_metadata():
    text = (
        "# 2026-03-01\n\n## Chat with Ines (19:04)\n\n"
        "- [19:05] Ines: I switched to black coffee\n"
        "- Long item that wraps\n  onto a second line <!-- memext origin=agent -->\n"
        "\nA paragraph of diary prose, hard-wrapped\nby its writer.\n\n"
        "## 15:17 <!-- memext supersedes=MEMORY.md:6-6 -->\nClara's visit moved to 6 September.\n"
    )
    assert markdown_entries(text) == [
        EntryText(5, 5, "- [19:05] Ines: I switched to black coffee"),
        EntryText(6, 7, "- Long item that wraps\n  onto a second line"),
        EntryText(9, 10, "A paragraph of diary prose, hard-wrapped\nby its writer."),
        EntryText(13, 13, "Clara's visit moved to 6 September."),
    ]


def test_a_file_of_headings_only_has_no_entries():
    assert markdown_entries("# Memory\n\n## People\n") == []


def test_a_transcript_entry_is_one_message():
    lines = [(1, "User: where is the key?"), (2, "Assistant: with the neighbour"), (2, "at number 12."), (4, "User: thanks")]
    assert transcript_entries(lines) == [
        EntryText(1, 1, "User: where is the key?"),
        EntryText(2, 2, "Assistant: with the neighbour\nat number 12."),
        EntryText(4, 4, "User: thanks"),
    ]
