"""JupyterLab on 127.0.0.1 for the browser tests, and what they measure.

Lab runs with a token and private config/runtime/data folders, no update
checks or PyPI queries; chromium (Debian's, never downloaded) runs with
background networking off. ``exposeAppInBrowser`` gives the tests
``window.jupyterapp`` to run Lab commands (run all cells, change theme).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import nbformat
from conftest import ROOT
from memext_helpers import install_kernelspec

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = ROOT / "test-artifacts"
KERNEL_NAME = "memext-test"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(path: Path, cells: list[str]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "memext test", "language": "python"}
    nbformat.write(nb, path)


def _wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"jupyter lab did not answer at {url}:\n{log.read_text()[-3000:]}")


@contextmanager
def jupyter_lab(tmp_path: Path, root: Path, env_extra: dict[str, str]) -> Iterator[dict]:
    """A running Lab serving ``root``; yields ``{"base", "token", "log"}``."""
    jupyter = {name: tmp_path / "jupyter" / name for name in ("config", "runtime", "data")}
    for d in jupyter.values():
        d.mkdir(parents=True)
    install_kernelspec(jupyter["data"], KERNEL_NAME)
    # The news prompt would pop up over the notebook; nothing else is needed.
    (jupyter["config"] / "labconfig").mkdir()
    (jupyter["config"] / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}, "exposeAppInBrowser": True}),
        encoding="utf-8",
    )
    token = secrets.token_hex(16)
    port = free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(jupyter["config"]),
        JUPYTER_RUNTIME_DIR=str(jupyter["runtime"]),
        JUPYTER_DATA_DIR=str(jupyter["data"]),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
        **env_extra,
    )
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                "lab",
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly",  # no PyPI queries
                "--allow-root",  # CI containers often run as root
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=root,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(f"{base}/api/status?token={token}", proc, log)
        yield {"base": base, "token": token, "log": log}
    finally:
        try:  # shuts down the kernels too
            req = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
            urllib.request.urlopen(req, timeout=10).close()
            proc.wait(timeout=20)
        except Exception:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def notebook_url(lab: dict, name: str, workspace: str = "memext-test") -> str:
    return f"{lab['base']}/lab/workspaces/{workspace}/tree/{name}?reset&token={lab['token']}"


#: In the page: every piece of text under ``selector`` that a person reads,
#: with its colour and the colour behind it (backgrounds composited up the
#: tree, text alpha blended onto them) and the WCAG contrast ratio.
CONTRAST_JS = r"""
(selector) => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, base) => [0, 1, 2].map(i => top[i] * top[3] + base[i] * (1 - top[3]));
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const lum = (rgb) => {
    const [r, g, b] = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const out = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent.trim();
      const el = n.parentElement;
      if (!text || !el) continue;
      const rect = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (rect.width === 0 || rect.height === 0 || style.visibility === 'hidden') continue;
      const bg = background(el);
      const fg = over(parse(style.color), bg);
      const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      out.push({text: text.slice(0, 60), cls: el.className || el.tagName, fg: fg.map(Math.round),
                bg: bg.map(Math.round), ratio: (hi + 0.05) / (lo + 0.05)});
    }
  }
  return out;
}
"""

#: In the page: table cells under ``selector`` whose text takes more than one line.
WRAPPED_CELLS_JS = r"""
(selector) => {
  const out = [];
  for (const td of document.querySelectorAll(selector)) {
    const range = document.createRange();
    range.selectNodeContents(td);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    if (tops.size > 1) out.push(td.textContent);
  }
  return out;
}
"""
