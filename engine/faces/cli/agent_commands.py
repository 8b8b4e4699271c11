"""``memext agents`` (list, add, remove, prune) and ``memext config``."""

from __future__ import annotations

from pathlib import Path

import click

from ... import AgentConfig, MemextError, app_paths
from ...for_faces import (
    add_agent,
    change_memory_search_list,
    driver_of,
    orphaned_indexes,
    provider_spec,
    purge_agent_index,
    remote_names,
    remove_agent,
    remove_index,
    store_location,
)
from .options import agent_option, ctx_config, examples, json_option, print_json
from .output import human_size


def _config_file(ctx: click.Context) -> Path:
    return Path((ctx.obj or {}).get("config_path") or app_paths().config_file)


def _agent_row(a: AgentConfig) -> dict:
    return {"id": a.id, "workspace": str(a.workspace), "index": store_location(a), "adhoc": a.adhoc, "provider": a.settings.provider}


@click.group(
    "agents",
    invoke_without_command=True,
    short_help="List the configured agents; add, remove or prune them.",
    epilog=examples("memext agents", "memext agents add work ~/agents/work"),
)
@agent_option
@json_option
@click.pass_context
def agents_cmd(ctx, agent, as_json) -> None:
    """List agents (or add, remove, prune: memext agents add ID WORKSPACE)."""
    if ctx.invoked_subcommand is not None:
        return
    cfg = ctx_config(ctx)
    rows = [_agent_row(a) for a in ([cfg.agent(agent)] if agent else cfg.agents)]
    if as_json:
        print_json(rows)
        return
    if cfg.path is None:
        click.echo(f"no config file ({app_paths().config_file}); using the current folder as an ad-hoc agent:")
    for r in rows:
        click.echo(f"{r['id']}  {r['workspace']}")


@agents_cmd.command(
    "add",
    short_help="Add an agent to the config file (created if missing).",
    epilog=examples("memext agents add work ~/agents/work", "memext agents add notes ~/notes --extra-path ~/archive/notes.md"),
)
@click.argument("agent_id")
@click.argument("workspace", type=click.Path(file_okay=False))
@click.option("--extra-path", multiple=True, help="More folders or .md files to index (repeatable).")
@json_option
@click.pass_context
def agents_add(ctx, agent_id, workspace, extra_path, as_json) -> None:
    """Add an agent to the config file (created if missing)."""
    path = _config_file(ctx)
    ws = Path(workspace).expanduser().resolve()
    if not ws.is_dir():
        raise MemextError(f"workspace {ws} is not a folder")
    add_agent(path, agent_id, ws, list(extra_path))
    if as_json:
        print_json({"added": agent_id, "workspace": str(ws), "config": str(path)})
    else:
        click.echo(f"added agent {agent_id} ({ws}) to {path}")


@agents_cmd.command(
    "remove",
    short_help="Remove an agent from the config file (its files stay).",
    epilog=examples("memext agents remove work", "memext agents remove work --json"),
)
@click.argument("agent_id")
@click.option("--purge", is_flag=True, help="Also delete the agent's index files (its memory files always stay).")
@json_option
@click.pass_context
def agents_remove(ctx, agent_id, purge, as_json) -> None:
    """Remove an agent from the config file (its memory files stay; its
    index too unless --purge; `memext agents prune` lists indexes nothing uses)."""
    path = _config_file(ctx)
    deleted: list[Path] = []
    if purge:
        cfg = ctx_config(ctx)
        if cfg.path is None:
            raise MemextError(f"no config file {path}, so no agent {agent_id!r} to remove")
        # Files first: a refusal (not memext's file, a process writing it) leaves the config as it was.
        deleted = purge_agent_index(cfg.agent(agent_id), cfg)
    remove_agent(path, agent_id)
    if as_json:
        out: dict = {"removed": agent_id, "config": str(path)}
        if purge:
            out["deleted"] = [str(p) for p in deleted]
        print_json(out)
        return
    click.echo(f"removed agent {agent_id} from {path}")
    if purge:
        click.echo(f"deleted its index: {len(deleted)} file{'s' if len(deleted) != 1 else ''}" if deleted else "it had no index files")
        for p in deleted:
            click.echo(f"  {p}")


@agents_cmd.command(
    "prune",
    short_help="List (or delete) ad-hoc indexes nothing uses any more.",
    epilog=examples("memext agents prune", "memext agents prune --yes"),
)
@click.option("--yes", is_flag=True, help="Delete the listed index files (default: only list them).")
@json_option
@click.pass_context
def agents_prune(ctx, yes, as_json) -> None:
    """List (or with --yes delete) indexes of ad-hoc agents whose folder is
    gone, holds no memory files any more, or is now a configured agent's
    workspace (indexed ad hoc before `memext agents add`)."""
    found = orphaned_indexes(ctx_config(ctx), app_paths().index_dir)
    if yes:
        for o in found:
            remove_index(o.path)  # LockTimeout (a process writes it): one line, exit 2
    if as_json:
        print_json(
            {
                "deleted": yes,
                "indexes": [
                    {"agent": o.agent_id, "path": str(o.path), "workspace": o.workspace, "reason": o.reason, "size": o.size} for o in found
                ],
            }
        )
        return
    if not found:
        click.echo("no unused ad-hoc indexes")
        return
    for o in found:
        click.echo(f"{'deleted' if yes else 'unused'}  {o.path} ({human_size(o.size)}): {o.workspace}: {o.reason}")
    if not yes:
        click.echo("run `memext agents prune --yes` to delete them")


@click.group(
    "config",
    invoke_without_command=True,
    short_help="Show where the config file is and check that it loads.",
    epilog=examples("memext config", "memext config allow-remote openai"),
)
@agent_option
@json_option
@click.pass_context
def config_cmd(ctx, agent, as_json) -> None:
    """Show where the config file is and check that it loads (-a: one agent's
    index); `memext config allow-remote openai` lets auto send notes to OpenAI."""
    if ctx.invoked_subcommand is not None:
        return
    p = app_paths()
    path = _config_file(ctx)
    cfg = ctx_config(ctx)
    agents = [cfg.agent(agent)] if agent else cfg.agents
    folders = _index_folders(agents)
    data = {
        "config": str(path),
        "config_exists": cfg.path is not None,
        "indexes": list(folders),
        "cache": str(p.cache_dir),
        "logs": str(p.log_dir),
        "agents": [_agent_row(a) for a in agents],
    }
    if as_json:
        print_json(data)
        return
    click.echo(f"config   {path}{'' if cfg.path else ' (not present: ad-hoc agent)'}")
    for folder, ids in folders.items():
        named = f" ({', '.join(ids)})" if len(folders) > 1 else ""
        click.echo(f"indexes  {folder}{named}")
    click.echo(f"cache    {p.cache_dir}")
    click.echo(f"logs     {p.log_dir}")
    if agent:
        a = agents[0]
        click.echo(f"agent    {a.id}: {a.workspace}, index {store_location(a)}")
    else:
        click.echo(f"agents   {', '.join(a.id for a in agents)}")


def _index_folders(agents: list[AgentConfig]) -> dict[str, list[str]]:
    """Where the agents' indexes are (the folder of an index file, or the
    server location), each with the agents there, in agent order:
    ``store.path`` may put them anywhere, not only in the default folder."""
    out: dict[str, list[str]] = {}
    for a in agents:
        where = str(a.db_path().parent) if driver_of(a).local else store_location(a)
        out.setdefault(where, []).append(a.id)
    return out


@config_cmd.command(
    "allow-remote",
    short_help="Let provider auto send notes to a remote API (one-time consent).",
    epilog=examples("memext config allow-remote openai", "memext config allow-remote gemini -a work --revoke"),
)
@click.argument("provider", type=click.Choice(remote_names()))
@agent_option
@click.option("--revoke", is_flag=True, help="Take the consent back: auto no longer sends notes there.")
@json_option
@click.pass_context
def config_allow_remote(ctx, provider, agent, revoke, as_json) -> None:
    """Let provider = "auto" send your notes to PROVIDER's API when its key
    is set (recorded as memory_search.allow_remote; -a: one agent only)."""
    path = _config_file(ctx)
    if revoke:
        key, wanted = change_memory_search_list(path, ["allow_remote"], remove=provider, agent_id=agent)
    else:
        key, wanted = change_memory_search_list(path, ["allow_remote"], add=provider, agent_id=agent)
    label = provider_spec(provider).label
    if as_json:
        print_json({"config": str(path), "key": key, "allow_remote": wanted})
    elif revoke:
        click.echo(f"{key} = {wanted} in {path}: auto no longer sends notes to {label}")
    else:
        click.echo(f'{key} = {wanted} in {path}: with provider = "auto" and a {label} key, notes are sent to {label} to be embedded')
