"""Unit tests of the ``roofline`` Python package, run by ``cargo xtask test`` in a fresh virtual
environment where the built wheel is installed (``xtask/src/embed_kit.rs``), with the binary it
installed: ``python -m unittest discover -s tests/python``."""

from __future__ import annotations

import base64
import csv
import gzip
import html
import io
import json
import os
import re
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, List
from unittest import mock

import roofline
from roofline import _cli, _notebook

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "tests/fixtures/bundles/v100-deepcam-example.json"
AMP = ROOT / "tests/fixtures/bundles/deepcam-v100-amp-fw.json"
FP32 = ROOT / "tests/fixtures/bundles/deepcam-v100-fp32-fw.json"
TRACE = ROOT / "tests/fixtures/traces/sampled-rank-0-shapes.json.gz"
CPU_TRACE = ROOT / "tests/fixtures/traces/cpu-small-net.json.gz"
NCU_CSV = next((ROOT / "tests/fixtures").rglob("*.csv"), None)


def srcdoc(output: str) -> str:
    """The page inside a chart output's iframe."""
    m = re.search(r'srcdoc="([^"]*)"', output)
    assert m is not None, output[:200]
    return html.unescape(m.group(1))


class FakeProfile:
    """Stands for a ``torch.profiler.profile`` after its run: it exports a real GPU trace."""

    def __init__(self) -> None:
        self.exported: List[Path] = []

    def export_chrome_trace(self, path: str) -> None:
        with gzip.open(TRACE, "rb") as f:
            Path(path).write_bytes(f.read())
        self.exported.append(Path(path))


class Binary(unittest.TestCase):
    def test_the_binary_is_the_one_installed_with_the_package(self) -> None:
        found = Path(roofline.binary())
        self.assertTrue(found.is_file())
        self.assertEqual(found.parent, Path(sys.prefix, "bin").resolve())

    def test_roofline_bin_wins(self) -> None:
        with mock.patch.dict(os.environ, {"ROOFLINE_BIN": "/somewhere/roofline"}):
            self.assertEqual(roofline.binary(), "/somewhere/roofline")

    def test_inputs_are_told_apart_by_their_first_bytes(self) -> None:
        self.assertEqual(_cli.kind_of(BUNDLE), "bundle")
        self.assertEqual(_cli.kind_of(TRACE), "trace")
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp, "t.json")
            with gzip.open(TRACE, "rb") as f:
                plain.write_bytes(f.read())
            self.assertEqual(_cli.kind_of(plain), "trace")
            ncu = Path(tmp, "k.csv")
            ncu.write_text('"ID","Kernel Name","Metric Name"\n')
            self.assertEqual(_cli.kind_of(ncu), "ncu")


class Show(unittest.TestCase):
    def setUp(self) -> None:
        roofline._viewer_at = None

    def test_the_first_chart_carries_the_viewer_and_the_next_ones_do_not(self) -> None:
        with mock.patch.object(roofline, "_cell", return_value=(None, None)):
            first = roofline.show(BUNDLE)._repr_html_()
            second = roofline.show(AMP, baseline=FP32, chart="time")._repr_html_()
        self.assertEqual(first.count("window.__rooflineViewer = "), 1)
        self.assertNotIn("__rooflineViewer = ", second)
        # The frame holds no viewer code, only its bootstrap, manifest and gzipped bundles.
        for out in (first, second):
            page = srcdoc(out)
            self.assertNotIn('id="roofline-wasm"', page)
            self.assertNotIn('id="roofline-app"', page)
            self.assertIn('<body data-embed="true">', page)
            self.assertIn("parent.__rooflineViewer", page)
        manifest = json.loads(
            re.search(r'id="roofline-manifest">([^<]*)</script>', srcdoc(second)).group(1)
        )
        self.assertEqual([b["name"] for b in manifest["bundles"]], [AMP.name, FP32.name])
        self.assertIn("chart=time", manifest["query"])
        # Each bundle inflates back to the bundle (as the page format writes it: `<` escaped).
        packed = re.findall(r'class="roofline-bundle-gz">([^<]*)</script>', srcdoc(second))
        self.assertEqual(len(packed), 2)
        text = gzip.decompress(base64.b64decode(packed[0])).decode()
        self.assertEqual(json.loads(text), json.loads(AMP.read_text()))
        # A chart costs far less than 300 KB besides its bundle.
        self.assertLess(len(second) - sum(len(p) for p in packed), 30_000)
        self.assertGreater(len(first), 300_000)

    def test_a_new_run_of_the_cell_that_carried_the_viewer_carries_it_again(self) -> None:
        chart = roofline.show(BUNDLE)
        seen = []
        for cell in [("a", 1), ("a", 1), ("b", 2), ("a", 3), ("b", 4), (None, 5)]:
            with mock.patch.object(roofline, "_cell", return_value=cell):
                seen.append("__rooflineViewer = " in chart._repr_html_())
        self.assertEqual(seen, [True, False, False, True, False, False])

    def test_self_contained_charts_all_carry_the_viewer(self) -> None:
        chart = roofline.show(BUNDLE, self_contained=True)
        self.assertIn("__rooflineViewer = ", chart._repr_html_())
        self.assertIn("__rooflineViewer = ", chart._repr_html_())

    def test_height_fixed_or_following_the_chart(self) -> None:
        out = roofline.show(BUNDLE, height=400)._repr_html_()
        self.assertIn("height:400px", out)
        self.assertIn('data-roofline-height="fixed"', out)
        tag = re.search(r"<iframe[^>]*srcdoc=", roofline.show(BUNDLE)._repr_html_()).group(0)
        self.assertNotIn("data-roofline-height", tag)
        self.assertIn(_notebook.HEIGHTS_JS, out)

    def test_a_trace_is_imported_on_the_fly(self) -> None:
        chart = roofline.show(TRACE)
        self.assertEqual(chart.names, ["sampled-rank-0-shapes.json"])
        self.assertIn("chart=time", chart.page)
        self.assertIn("wrote", chart.log)  # the import's report
        self.assertIn("time-based chart", chart.log)  # the plot's

    def test_a_profile_is_exported_imported_and_removed(self) -> None:
        prof = FakeProfile()
        chart = roofline.show(prof)
        self.assertEqual(chart.names, ["torch-profile.json"])
        self.assertEqual(len(prof.exported), 1)
        self.assertFalse(prof.exported[0].exists())
        self.assertFalse(prof.exported[0].parent.exists())

    def test_a_cpu_only_trace_says_a_gpu_is_needed(self) -> None:
        with self.assertRaises(roofline.RooflineError) as e:
            roofline.show(CPU_TRACE)
        self.assertIn("CPU-only trace", str(e.exception))

    def test_bad_arguments_are_refused(self) -> None:
        with self.assertRaises(ValueError):
            roofline.show(BUNDLE, chart="pie")
        with self.assertRaises(ValueError):
            roofline.show(BUNDLE, height=10)
        with self.assertRaises(FileNotFoundError):
            roofline.show(ROOT / "no-such-bundle.json")
        with self.assertRaises(TypeError):
            roofline.show(42)

    def test_save_writes_the_self_contained_chart_page(self) -> None:
        chart = roofline.show(BUNDLE)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp, "chart.html")
            chart.save(out)
            page = out.read_text()
        self.assertIn('id="roofline-wasm"', page)
        self.assertIn('<body data-embed="true">', page)
        self.assertIn(repr(chart), "<roofline chart of v100-deepcam-example.json>")


class Load(unittest.TestCase):
    def header(self) -> List[str]:
        text = _cli.run(["info", str(BUNDLE), "--format", "csv"]).stdout.decode()
        return next(csv.reader(io.StringIO(text)))

    def test_a_dataframe_with_info_csv_columns(self) -> None:
        import pandas

        df = roofline.load(BUNDLE)
        self.assertIsInstance(df, pandas.DataFrame)
        self.assertEqual(list(df.columns), self.header())
        self.assertEqual(len(df), 11)

    def test_a_list_of_dicts_without_pandas(self) -> None:
        with mock.patch.dict(sys.modules, {"pandas": None}):
            rows: Any = roofline.load(BUNDLE)
        self.assertIsInstance(rows, list)
        self.assertEqual(list(rows[0].keys()), self.header())
        self.assertIsInstance(rows[0]["launches"], int)
        self.assertIsInstance(rows[0]["time_s"], float)
        # Unknown figures are None, never 0.
        self.assertIn(None, rows[0].values())

    def test_per_operator_rows_of_a_trace(self) -> None:
        with mock.patch.dict(sys.modules, {"pandas": None}):
            ops: Any = roofline.load(TRACE, group_by="op")
        self.assertTrue(any(r["name"] == "aten::mm" for r in ops))
        with self.assertRaises(ValueError):
            roofline.load(TRACE, group_by="layer")


    def test_a_traces_ceilings_from_its_gpu_chosen_or_none(self) -> None:
        # A real MI250 trace: its GPU's datasheet by default, another GPU by hand, or none.
        mi250 = ROOT / "tests/fixtures/traces/mi250-rocm62-minitoy-train.json.gz"
        with mock.patch.dict(sys.modules, {"pandas": None}):
            own: Any = roofline.load(mi250)
            none: Any = roofline.load(mi250, ceilings="none")
        self.assertIn("datasheet", {r["ceiling_source"] for r in own})
        self.assertEqual({r["ceiling_source"] for r in none}, {None})
        with self.assertRaises(roofline.RooflineError):
            # Another GPU than the trace's: refused, as the CLI refuses it.
            roofline.load(mi250, ceilings="nvidia-h100-sxm5")
        with self.assertRaises(ValueError):
            roofline.load(mi250, ceilings=" ")


class Page(unittest.TestCase):
    def test_the_height_listener_is_dist_embed_js(self) -> None:
        self.assertEqual(_notebook.HEIGHTS_JS, (ROOT / "viewer" / "web" / "embed.js").read_text())

    def test_split_refuses_what_is_not_a_standalone_page(self) -> None:
        with self.assertRaises(ValueError):
            _notebook.split("<html><head></head><body></body></html>")


if __name__ == "__main__":
    unittest.main()
