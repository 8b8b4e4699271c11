"""The trust benchmark: generated personal workspaces and labelled questions.

``generate`` writes them (seeded, byte-identical for a seed), ``run``
scores the engine on them; ``manifest.json`` fixes which workspaces form
the tune half and which the check half (never tuned on). See README.md.
"""
