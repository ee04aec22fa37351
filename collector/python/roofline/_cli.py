"""The ``roofline`` binary installed with this package, and what it is given.

The Python package is plain Python around the binary the same wheel installs (the wheel's
scripts, ``bin/roofline`` of the environment): every figure is computed by the binary, never
here. :func:`bundle_of` turns what a user holds (a bundle, a torch.profiler trace, an Nsight
Compute CSV, or a ``torch.profiler.profile`` after its run) into a bundle file for the binary.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.metadata
import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Iterator, List, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]


class RooflineError(RuntimeError):
    """The ``roofline`` binary failed, or could not be found; the message says why."""


def binary() -> str:
    """The path of the ``roofline`` executable this package runs.

    In order: ``$ROOFLINE_BIN``; the executable installed with this distribution (found through
    its installed-files record, so a ``--user`` install finds its own; ``bin/`` beside the
    package for ``pip install --target``); the scripts directory of this interpreter's
    environment; ``roofline`` on ``PATH``.

    Raises:
        RooflineError: when none is found.
    """
    env = os.environ.get("ROOFLINE_BIN")
    if env:
        return env
    candidates: List[Path] = []
    try:
        dist = importlib.metadata.distribution("roofline")
        for f in dist.files or []:
            if f.name == "roofline" and f.parent.name in ("bin", "scripts", "Scripts"):
                candidates.append(Path(str(dist.locate_file(f))))
    except importlib.metadata.PackageNotFoundError:
        pass
    # `pip install --target DIR` puts the package in DIR and the executable in DIR/bin (its
    # record then points elsewhere).
    candidates.append(Path(__file__).resolve().parents[1] / "bin" / "roofline")
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / "roofline")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c.resolve())
    found = shutil.which("roofline")
    if found:
        return found
    raise RooflineError(
        "the roofline executable was not found: it is installed by the same wheel as this package "
        "(pip install roofline-*.whl); or set ROOFLINE_BIN to its path"
    )


def run(args: Sequence[str]) -> "subprocess.CompletedProcess[bytes]":
    """Runs ``roofline ARGS…`` and returns the finished process (standard output as bytes).

    Raises:
        RooflineError: when it exits non-zero, with what it wrote to standard error.
    """
    p = subprocess.run([binary(), *args], capture_output=True, check=False)
    if p.returncode != 0:
        said = p.stderr.decode("utf-8", "replace").strip()
        raise RooflineError(said or f"roofline {' '.join(args)} exited with {p.returncode}")
    return p


def is_profile(x: Any) -> bool:
    """Whether ``x`` is a ``torch.profiler.profile`` (or anything that exports a Chrome trace)."""
    return callable(getattr(x, "export_chrome_trace", None))


def kind_of(path: Path) -> str:
    """``"bundle"``, ``"trace"`` (torch.profiler, JSON or gzipped JSON) or ``"ncu"`` (CSV), read
    from the file's first bytes: a bundle names ``"schema_version"``, a trace ``"schemaVersion"``,
    ``"traceEvents"`` or ``"deviceProperties"``; anything that is not JSON is Nsight Compute
    output for ``roofline import``."""
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:  # type: ignore[operator]
        text = f.read(1 << 16).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return "ncu"
    if '"schema_version"' in text:
        return "bundle"
    if any(k in text for k in ('"schemaVersion"', '"traceEvents"', '"deviceProperties"')):
        return "trace"
    return "bundle"


def _import(src: Path, out: Path, extra: List[str], log: Optional[List[str]]) -> None:
    """``roofline import SRC -o OUT EXTRA…``; what it says (its notes) appended to ``log``."""
    said = run(["import", str(src), "-o", str(out), *extra]).stderr
    if log is not None:
        log.append(said.decode("utf-8", "replace"))


@contextlib.contextmanager
def bundle_of(
    x: Any,
    machine: Optional[PathLike] = None,
    log: Optional[List[str]] = None,
    options: Sequence[str] = (),
) -> Iterator[Path]:
    """A bundle file for ``x``, for the length of the ``with`` block.

    ``x`` is a bundle path (used as it is), a torch.profiler trace or Nsight Compute CSV path
    (imported with ``roofline import`` into a temporary bundle), or a ``torch.profiler.profile``
    after its run (its trace exported to a temporary file, then imported). Temporary files are
    removed when the block ends. ``machine`` (a ``roofline machine`` bundle) gives an import
    the GPU's ceilings; ``options`` are more of ``roofline import``'s flags (``--model-config
    PATH``, ``--ceilings datasheet:GPU``); what the import says (its notes) is appended to
    ``log``.

    Raises:
        FileNotFoundError: when a path does not exist.
        RooflineError: when the import fails (a CPU-only trace has no kernels to draw).
    """
    extra = ["--machine", os.fspath(machine)] if machine is not None else []
    extra += list(options)
    if is_profile(x):
        with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
            trace = Path(tmp) / "trace.json"
            x.export_chrome_trace(str(trace))
            out = Path(tmp) / "torch-profile.json"
            _import(trace, out, extra, log)
            trace.unlink()
            yield out
        return
    if not isinstance(x, (str, os.PathLike)):
        raise TypeError(
            f"expected a bundle, trace or CSV path, or a torch.profiler.profile; got {type(x).__name__}"
        )
    path = Path(os.fspath(x))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if kind_of(path) == "bundle":
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
        out = Path(tmp) / (path.name.split(".")[0] + ".json")
        _import(path, out, extra, log)
        yield out
