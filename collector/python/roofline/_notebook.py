"""Charts in notebook outputs, with the viewer's code loaded once per notebook.

A chart is the binary's chart-only page (``roofline plot --format html --embed``) in an iframe
whose ``srcdoc`` holds the page without the viewer's code: its manifest, its bundles (gzipped,
base64: no HTML escaping to inflate them) and a small bootstrap. The viewer's code (the
wasm-bindgen glue and the gzipped wasm, about 0.6 MB) is written once per kernel session, by the
first chart output, as ``window.__rooflineViewer``; each chart's bootstrap takes it from
``window.parent`` (an iframe ``srcdoc`` is same-origin with the page around it), waiting for it
when the output that carries it is rendered later. This works where a notebook's outputs share
one page: JupyterLab and Notebook 7 (trusted outputs: their scripts run), VS Code (every output
in one webview) and nbconvert's HTML; where each output is isolated (Google Colab, not tried),
``self_contained=True`` puts the code in every chart.

The page format's elements (``shared/src/chart/standalone.rs``, format 1) are read by their opening
tags, which that format keeps: no data element holds ``<``, and no script holds ``</script``.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from dataclasses import dataclass
from typing import Optional

_WASM = re.compile(r'<script type="application/octet-stream" id="roofline-wasm">([^<]*)</script>\n?')
_APP = re.compile(r'<script type="module" id="roofline-app">(.*?)</script>\n?', re.S)
_BUNDLE = re.compile(r'<script type="application/json" class="roofline-bundle">([^<]*)</script>')

# The height listener of dist/embed.js (the same text; tests/python checks it), run by every chart
# output: the chart's page posts its height and its iframe is sized to it.
HEIGHTS_JS = r"""// roofline embed helper (docs/embedding.md): sizes every iframe that shows a roofline chart-only
// page (`roofline plot --format html --embed`, or embed.html) to the chart's height. The chart
// posts {type: "roofline:height", height} to this page; the iframe it comes from gets that height.
// Load it once per page, anywhere: it asks the charts already there to say their height again.
// An iframe with a data-roofline-height="fixed" attribute keeps the height it was given.
(function () {
  "use strict";
  if (window.__rooflineHeights) return;
  window.__rooflineHeights = true;
  window.addEventListener("message", function (e) {
    var d = e.data;
    if (!d || d.type !== "roofline:height" || typeof d.height !== "number") return;
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      if (f.contentWindow === e.source && f.getAttribute("data-roofline-height") !== "fixed") {
        f.style.height = Math.min(Math.max(Math.ceil(d.height), 50), 20000) + "px";
      }
    }
  });
  function ask() {
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow) frames[i].contentWindow.postMessage({ type: "roofline:height?" }, "*");
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ask);
  else ask();
})();
"""

# The frame's bootstrap: the viewer's code from the page around it, the bundles inflated into the
# elements the viewer reads, the view the chart switch asked for; then the viewer starts as in any
# standalone page (its own module script inflates the wasm).
BOOTSTRAP_JS = r"""// roofline notebook chart: the viewer's code comes from the notebook page, once per page.
(async () => {
  const say = (text) => {
    let p = document.getElementById("roofline-status");
    if (!p) {
      p = document.createElement("p");
      p.id = "roofline-status";
      p.style.cssText = "font: 13px system-ui, sans-serif; color: #555; margin: 8px 0";
      document.body.append(p);
    }
    p.textContent = text;
  };
  const code = () => new Promise((ok) => {
    const find = () => parent.__rooflineViewer;
    if (find()) return ok(find());
    say("Waiting for the roofline viewer's code: the first roofline.show() output of this kernel session carries it (run that cell again if it was cleared).");
    const t = setInterval(() => { if (find()) { clearInterval(t); ok(find()); } }, 200);
  });
  const inflate = (b64) => new Response(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))])
    .stream().pipeThrough(new DecompressionStream("gzip"))).text();
  try {
    const v = await code();
    const asked = frameElement && frameElement.getAttribute("data-roofline-query");
    if (asked !== null) {
      const m = document.getElementById("roofline-manifest");
      const j = JSON.parse(m.textContent);
      j.query = asked;
      m.textContent = JSON.stringify(j);
    }
    for (const el of [...document.querySelectorAll("script.roofline-bundle-gz")]) {
      const s = document.createElement("script");
      s.type = "application/json";
      s.className = "roofline-bundle";
      s.textContent = await inflate(el.textContent);
      el.replaceWith(s);
    }
    const wasm = document.createElement("script");
    wasm.type = "application/octet-stream";
    wasm.id = "roofline-wasm";
    wasm.textContent = v.wasm;
    document.head.append(wasm);
    const app = document.createElement("script");
    app.type = "module";
    app.id = "roofline-app";
    app.textContent = v.app;
    document.head.append(app);
    document.getElementById("roofline-status")?.remove();
    const hint = frameElement && frameElement.parentElement.querySelector(".roofline-hint");
    if (hint) hint.remove();
  } catch (e) {
    say("The roofline chart could not start: " + e + (String(e).includes("cross-origin") ? " (this notebook isolates its outputs: use roofline.show(..., self_contained=True))" : ""));
  }
})();
"""

HINT = (
    "If no chart shows here, this output's scripts did not run: trust the notebook "
    "(or run the cell again), or open it in JupyterLab, Notebook 7, VS Code or nbconvert's HTML."
)


@dataclass(frozen=True)
class Split:
    """A chart-only page taken apart: the frame's page, and the viewer's code it left out."""

    frame: str
    """The page without the viewer's code, its bundles gzipped, with the bootstrap."""
    app: str
    """The module script's text: the wasm-bindgen glue, then the page's start-up code."""
    wasm: str
    """The gzipped wasm, base64."""


def _packed(match: "re.Match[str]") -> str:
    gz = gzip.compress(match.group(1).encode("utf-8"), mtime=0)
    return (
        '<script type="application/octet-stream" class="roofline-bundle-gz">'
        + base64.b64encode(gz).decode("ascii")
        + "</script>"
    )


def split(page: str) -> Split:
    """Takes the viewer's code out of a chart-only page and packs its bundles for a ``srcdoc``.

    Raises:
        ValueError: when the page is not a standalone page of format 1.
    """
    wasm = _WASM.search(page)
    app = _APP.search(page)
    if wasm is None or app is None or "</head>" not in page:
        raise ValueError("not a roofline standalone page (format 1): no viewer code found")
    frame = _APP.sub("", _WASM.sub("", page, count=1), count=1)
    frame = _BUNDLE.sub(_packed, frame)
    frame = frame.replace(
        "</head>", '<script type="module">\n' + BOOTSTRAP_JS + "</script>\n</head>", 1
    )
    return Split(frame=frame, app=app.group(1), wasm=wasm.group(1))


def _js_string(s: str) -> str:
    """``s`` as a JavaScript string literal safe inside a ``<script>`` element."""
    return json.dumps(s).replace("<", "\\u003c")


def loader(app: str, wasm: str, version: str) -> str:
    """The script that puts the viewer's code on the page (``window.__rooflineViewer``)."""
    return (
        "<script>\n// roofline viewer code for this notebook's charts (roofline.show), once per page.\n"
        f"window.__rooflineViewer = {{version: {_js_string(version)}, app: {_js_string(app)}, "
        f"wasm: {_js_string(wasm)}}};\n</script>\n"
    )


def output(frame: str, height: Optional[int], title: str) -> str:
    """One chart's output: the height listener, the iframe, and a hint shown only when nothing
    ran (the bootstrap removes it)."""
    fixed = height is not None
    style = f"width:100%;height:{height if fixed else 520}px;border:0;display:block"
    extra = ' data-roofline-height="fixed"' if fixed else ""
    return (
        '<div class="roofline-output">\n'
        f"<script>\n{HEIGHTS_JS}</script>\n"
        f'<iframe class="roofline-frame" title="{html.escape(title)}" style="{style}"{extra} '
        f'srcdoc="{html.escape(frame, quote=True)}"></iframe>\n'
        f'<p class="roofline-hint" style="font:12px sans-serif;color:#777;margin:2px 0">{HINT}</p>\n'
        "</div>"
    )
