"""Rooflines in notebooks: ``roofline.show`` draws the interactive viewer inline, ``roofline.load``
returns the per-kernel table.

This package is plain Python around the ``roofline`` binary installed by the same wheel: every
figure is computed by the binary (``roofline import``, ``info``, ``plot``), so a notebook, the
CLI and the web viewer show the same numbers. Nothing here reaches the network.

>>> import roofline
>>> roofline.show("step.json")                      # a bundle
>>> roofline.show("trace.json.gz", chart="time")    # a torch.profiler trace, imported on the fly
>>> roofline.show(prof)                              # a torch.profiler.profile after its run
>>> df = roofline.load("step.json")                  # pandas DataFrame (list of dicts without pandas)
"""

from __future__ import annotations

import csv
import importlib.metadata
import io
import os
import re
from typing import Any, Dict, List, Optional, Union

from . import _notebook
from ._cli import PathLike, RooflineError, binary, bundle_of, run

__all__ = ["Chart", "RooflineError", "binary", "load", "show", "__version__"]

try:
    __version__ = importlib.metadata.version("roofline")
except importlib.metadata.PackageNotFoundError:  # run from a source tree
    __version__ = "0+unknown"

_CHARTS = ("hierarchical", "time")
_GROUPS = ("kernel", "op", "module")

# Where the viewer's code was last written in this kernel session: (cell id, execution count).
_viewer_at: Optional[tuple] = None


def _cell() -> tuple:
    """The notebook cell being run, as (cell id or None, execution count or None).

    JupyterLab, Notebook 7 and nbclient send the cell's id with each execution request; without
    it the code goes with the first chart of the session only.
    """
    try:
        from IPython import get_ipython  # type: ignore[import-not-found]

        ip = get_ipython()
        if ip is None:
            return (None, None)
        kernel = getattr(ip, "kernel", None)
        parent: Dict[str, Any] = {}
        if kernel is not None and hasattr(kernel, "get_parent"):
            parent = kernel.get_parent() or {}
        elif hasattr(ip, "parent_header"):
            parent = ip.parent_header or {}
        cell = (parent.get("metadata") or {}).get("cellId")
        return (cell, getattr(ip, "execution_count", None))
    except Exception:  # noqa: BLE001 - any frontend without these is simply not told apart
        return (None, None)


def _with_code(self_contained: bool) -> bool:
    """Whether this output carries the viewer's code: the first chart of the kernel session, the
    chart of a new run of the cell that carried it (its output is replaced), or every chart when
    ``self_contained``."""
    global _viewer_at
    if self_contained:
        return True
    here = _cell()
    if _viewer_at is None or (here[0] is not None and here[0] == _viewer_at[0] and here != _viewer_at):
        _viewer_at = here
        return True
    return False


class Chart:
    """An interactive roofline chart for a notebook output (``_repr_html_``).

    Made by :func:`show`; displays as the viewer's chart-only page in an iframe: hover, zoom, pan
    and the switch between the hierarchical and time-based charts. :attr:`page` is the
    self-contained chart-only page (the same file ``roofline plot --format html --embed``
    writes), which :meth:`save` writes.
    """

    def __init__(self, page: str, names: List[str], height: Optional[int], self_contained: bool, log: str) -> None:
        self.page = page
        """The chart-only HTML page, self-contained."""
        self.names = names
        """The bundles shown: the run, then the baseline when there is one."""
        self.height = height
        """The iframe's fixed height in pixels, or None to follow the chart's height."""
        self.self_contained = self_contained
        """Whether every output of this chart carries the viewer's code."""
        self.log = log
        """What the binary said while importing and drawing (notes on what was assumed)."""
        self._split = _notebook.split(page)

    def _repr_html_(self) -> str:
        parts = self._split
        code = _notebook.loader(parts.app, parts.wasm, __version__) if _with_code(self.self_contained) else ""
        title = "roofline chart: " + " vs ".join(self.names)
        return code + _notebook.output(parts.frame, self.height, title)

    def __repr__(self) -> str:
        return f"<roofline chart of {' vs '.join(self.names)}>"

    def save(self, path: PathLike) -> None:
        """Writes the self-contained chart-only page (for an iframe in documentation)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.page)


def show(
    x: Any,
    baseline: Any = None,
    chart: Optional[str] = None,
    height: Optional[int] = None,
    *,
    machine: Optional[PathLike] = None,
    model_config: Optional[PathLike] = None,
    ceilings: Optional[str] = None,
    self_contained: bool = False,
) -> Chart:
    """The interactive roofline viewer for ``x``, drawn inline by a notebook.

    Args:
        x: a bundle path; a torch.profiler trace (``.json``/``.json.gz``) or Nsight Compute CSV
            path, imported on the fly with ``roofline import``; or a ``torch.profiler.profile``
            after its run (its trace is exported to a temporary file, imported, and removed).
            A trace needs GPU kernels: a CPU-only profile has nothing to draw.
        baseline: what to compare with, of the same kinds: arrows from each kernel's baseline
            point to its current one.
        chart: ``"hierarchical"`` or ``"time"``; by default the hierarchical chart, or the
            time-based one when only it has something to draw (a trace without counters).
        height: the output's height in pixels; by default it follows the chart's.
        machine: a ``roofline machine`` bundle giving an imported trace or CSV the GPU's ceilings.
        model_config: a Hugging Face ``config.json`` for an imported LLM trace, giving its MoE
            layers their F and B (``roofline import --model-config``).
        ceilings: without ``machine``, the datasheet ceilings of this GPU of the catalogue
            (``"nvidia-h100-sxm5"``; ``roofline catalogue`` lists them), or ``"none"``; by
            default those of the GPU the trace names.
        self_contained: put the viewer's code (about 0.6 MB) in this chart's output too, for
            frontends whose outputs cannot see each other; by default it is written once per
            kernel session, with the first chart.

    Returns:
        A :class:`Chart`: a cell ending in ``roofline.show(...)`` draws it.

    Raises:
        RooflineError: when the binary refuses the input (its message says why).
        FileNotFoundError, TypeError, ValueError: for a missing path, an input of another kind,
            or an unknown chart or height.
    """
    if chart is not None and chart not in _CHARTS:
        raise ValueError(f"chart must be one of {', '.join(_CHARTS)}; got {chart!r}")
    if height is not None and (not isinstance(height, int) or not 50 <= height <= 20000):
        raise ValueError(f"height must be a number of pixels from 50 to 20000; got {height!r}")
    log: List[str] = []
    options = _import_options(model_config, ceilings)
    with bundle_of(x, machine, log, options) as current:
        args = ["plot", str(current), "--format", "html", "--embed", "-o", "-"]
        if chart is not None:
            args += ["--chart", chart]
        names = [current.name]
        if baseline is not None:
            with bundle_of(baseline, machine, log, options) as base:
                names.append(base.name)
                p = run([*args, "--baseline", str(base)])
        else:
            p = run(args)
    log.append(p.stderr.decode("utf-8", "replace"))
    return Chart(p.stdout.decode("utf-8"), names, height, self_contained, "".join(log))


_INT = re.compile(r"-?\d+")


def _value(text: str) -> Union[None, int, float, str]:
    """A CSV cell as Python reads it: empty is None (unknown, never 0), numbers are numbers."""
    if text == "":
        return None
    if _INT.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _import_options(model_config: Optional[PathLike], ceilings: Optional[str]) -> List[str]:
    """``roofline import``'s flags for :func:`show`'s and :func:`load`'s keywords."""
    out: List[str] = []
    if model_config is not None:
        out += ["--model-config", os.fspath(model_config)]
    if ceilings == "none":
        out.append("--no-datasheet")
    elif ceilings is not None:
        if not isinstance(ceilings, str) or not ceilings.strip():
            raise ValueError(f"ceilings must name a GPU of `roofline catalogue`, or be 'none'; got {ceilings!r}")
        out += ["--ceilings", "datasheet:" + ceilings.strip()]
    return out


def load(
    x: Any,
    *,
    group_by: str = "kernel",
    machine: Optional[PathLike] = None,
    model_config: Optional[PathLike] = None,
    ceilings: Optional[str] = None,
) -> Any:
    """The per-kernel table of ``x``: ``roofline info --format csv``'s rows and columns.

    Args:
        x: as :func:`show`'s (a bundle, trace or CSV path, or a ``torch.profiler.profile``).
        group_by: one row per ``"kernel"`` name, or per PyTorch ``"op"`` or ``"module"``.
        machine: a ``roofline machine`` bundle for an imported trace or CSV.
        model_config, ceilings: as :func:`show`'s.

    Returns:
        A pandas DataFrame when pandas is installed, else a list of dicts (one per row; empty
        cells, unknown figures, are None).
    """
    if group_by not in _GROUPS:
        raise ValueError(f"group_by must be one of {', '.join(_GROUPS)}; got {group_by!r}")
    with bundle_of(x, machine, None, _import_options(model_config, ceilings)) as path:
        text = run(["info", str(path), "--format", "csv", "--group-by", group_by]).stdout.decode("utf-8")
    try:
        import pandas  # type: ignore[import-not-found]
    except ImportError:
        return [{k: _value(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]
    return pandas.read_csv(io.StringIO(text))
