//! The embedding checks of `cargo xtask test`: the wheel's Python package in a notebook, and the
//! embed kit in documentation sites. Run after the wheel is built ([`crate::wheel::check`]); the
//! browser tests (`tests/browser/embed_kit.rs`) then open what this writes under
//! `<target>/embed-kit/`.
//!
//! - **Notebook**: a fresh virtual environment gets the built wheel (no index) and the pinned
//!   [`NBCONVERT`], [`IPYKERNEL`] and [`PANDAS`] (pip, from the registry or its cache); the
//!   package's unit tests (`tests/python/`, `unittest`) run there, counted with the workspace's
//!   tests; then `jupyter nbconvert --execute` runs `docs/roofline-notebook.ipynb` on a kernel of
//!   that environment (`notebook/roofline-notebook.ipynb`, outputs kept) and converts the result
//!   to HTML (`notebook/roofline-notebook.html`). PyTorch is not installed (several GB): the
//!   notebook's torch cells say so and skip.
//! - **Docs sites**: the recipes of `docs/embedding.md` marked `<!-- check: PATH -->` are written
//!   as they are to `sites/PATH`, the chart pages made with the installed `roofline plot --embed`,
//!   and a MkDocs (Material) and a Sphinx site built with the pinned [`MKDOCS`],
//!   [`MKDOCS_MATERIAL`] and [`SPHINX`] from a virtual environment kept under the target directory
//!   (made the first time, as the wheel's maturin is); the plain HTML recipe needs no build.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::process::{pip_install, root, run, venv};

/// The notebook converter and executor.
pub const NBCONVERT: &str = "7.17.2";
/// The notebook's Python kernel.
pub const IPYKERNEL: &str = "7.4.0";
/// pandas, for `roofline.load`'s DataFrame (its list of dicts is tested with pandas hidden).
pub const PANDAS: &str = "3.1.1";
/// MkDocs.
pub const MKDOCS: &str = "1.6.1";
/// The Material theme for MkDocs.
pub const MKDOCS_MATERIAL: &str = "9.8.2";
/// Sphinx.
pub const SPHINX: &str = "9.0.4";

/// The bundle the sites' charts show, and the baseline of the compare chart.
const CHART_BUNDLE: &str = "tests/fixtures/bundles/v100-deepcam-example.json";

/// `<target>/embed-kit`.
pub fn out_dir() -> PathBuf {
    crate::process::target_dir().join("embed-kit")
}

/// The hint after a failing `python3 -m venv`.
const VENV_HINT: &str = "python3 with the venv module is needed";

/// The Python unit tests' counts from `unittest`'s closing lines (`Ran N tests`, `OK` or
/// `FAILED (failures=F, errors=E)`).
fn unittest_counts(text: &str) -> Option<(usize, usize)> {
    let ran: usize = text.lines().find_map(|l| {
        l.strip_prefix("Ran ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })?;
    let failed = text
        .lines()
        .find(|l| l.starts_with("FAILED ("))
        .map(|l| {
            l.split(['(', ')', ',', ' '])
                .filter_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    (k == "failures" || k == "errors")
                        .then(|| v.parse::<usize>().ok())
                        .flatten()
                })
                .sum()
        })
        .unwrap_or(0);
    Some((ran - failed.min(ran), failed))
}

/// The notebook check and the package's unit tests: returns the tests passed and failed.
fn notebook(wheel: &Path) -> Result<(usize, usize), String> {
    let dir = out_dir().join("notebook");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let env = dir.join("venv");
    venv(&env, "a virtual environment", VENV_HINT)?;
    let mut c = Command::new(env.join("bin/pip"));
    c.args(["install", "--quiet", "--no-index", "--no-deps"])
        .arg(wheel);
    run("pip install the wheel (notebook)", c)?;
    let what = [
        format!("nbconvert=={NBCONVERT}"),
        format!("ipykernel=={IPYKERNEL}"),
        format!("pandas=={PANDAS}"),
    ];
    pip_install(
        &env,
        &what,
        &format!("pip install nbconvert {NBCONVERT}, ipykernel {IPYKERNEL}, pandas {PANDAS}"),
        &what.join(" "),
        "",
    )?;

    eprintln!("\n==> the roofline package's unit tests (Python, unittest)");
    let o = Command::new(env.join("bin/python"))
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(root().join("tests/python"))
        .current_dir(root())
        .env_remove("ROOFLINE_BIN")
        .output()
        .map_err(|e| format!("python -m unittest: {e}"))?;
    let said = String::from_utf8_lossy(&o.stderr);
    eprint!("{said}");
    let (passed, failed) = unittest_counts(&said)
        .ok_or_else(|| format!("the Python unit tests did not run:\n{said}"))?;
    if !o.status.success() || failed > 0 {
        return Err(format!(
            "the roofline package's unit tests failed: {passed} passed, {failed} failed"
        ));
    }

    // A kernel of this environment, by a name no other installation uses.
    let mut c = Command::new(env.join("bin/python"));
    c.args([
        "-m",
        "ipykernel",
        "install",
        "--sys-prefix",
        "--name",
        "roofline-check",
    ]);
    run("a Jupyter kernel in the notebook's environment", c)?;
    let started = std::time::Instant::now();
    let mut c = Command::new(env.join("bin/jupyter"));
    c.args([
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--ExecutePreprocessor.kernel_name=roofline-check",
        "--ExecutePreprocessor.timeout=300",
        "--output-dir",
    ])
    .arg(&dir)
    .arg(root().join("docs/roofline-notebook.ipynb"))
    .env("PATH", crate::process::prepend_path(&env.join("bin")))
    .env_remove("ROOFLINE_BIN");
    run(
        "jupyter nbconvert --execute docs/roofline-notebook.ipynb",
        c,
    )?;
    let mut c = Command::new(env.join("bin/jupyter"));
    c.args(["nbconvert", "--to", "html"])
        .arg(dir.join("roofline-notebook.ipynb"));
    run("jupyter nbconvert --to html (the executed notebook)", c)?;
    eprintln!(
        "notebook executed and converted in {:.0} s: {}",
        started.elapsed().as_secs_f64(),
        dir.join("roofline-notebook.html").display()
    );
    Ok((passed, failed))
}

/// The blocks of `docs/embedding.md` marked `<!-- check: PATH -->`: (PATH, the next fenced
/// block's text).
fn recipes(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line
            .trim()
            .strip_prefix("<!-- check:")
            .and_then(|r| r.strip_suffix("-->"))
        else {
            continue;
        };
        let mut body = String::new();
        let mut inside = false;
        for l in lines.by_ref() {
            if l.starts_with("```") {
                if inside {
                    break;
                }
                inside = true;
            } else if inside {
                body.push_str(l);
                body.push('\n');
            }
        }
        out.push((path.trim().to_string(), body));
    }
    out
}

fn write(path: &Path, text: &[u8]) -> Result<(), String> {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The sites' tools, made the first time (and again when a pin changes).
fn site_tools() -> Result<PathBuf, String> {
    let env = out_dir().join("site-tools");
    let pins = format!("mkdocs=={MKDOCS} mkdocs-material=={MKDOCS_MATERIAL} sphinx=={SPHINX}");
    let stamp = env.join("roofline-pins.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(pins.as_str()) {
        return Ok(env);
    }
    let _ = std::fs::remove_dir_all(&env);
    venv(&env, "a virtual environment", VENV_HINT)?;
    let what: Vec<String> = pins.split(' ').map(String::from).collect();
    pip_install(
        &env,
        &what,
        &format!("pip install {pins}"),
        &what.join(" "),
        "",
    )?;
    write(&stamp, pins.as_bytes())?;
    Ok(env)
}

/// Builds the sites of `docs/embedding.md`'s recipes with `roofline` (the installed wheel's).
fn sites(roofline: &Path) -> Result<(), String> {
    let dir = out_dir().join("sites");
    let _ = std::fs::remove_dir_all(&dir);
    let doc = root().join("docs/embedding.md");
    let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    let blocks = recipes(&text);
    for want in [
        "mkdocs/mkdocs.yml",
        "mkdocs/docs/index.md",
        "sphinx/conf.py",
        "sphinx/index.rst",
        "plain/index.html",
    ] {
        if !blocks.iter().any(|(p, _)| p == want) {
            return Err(format!(
                "docs/embedding.md has no `<!-- check: {want} -->` recipe"
            ));
        }
    }
    for (path, body) in &blocks {
        write(&dir.join(path), body.as_bytes())?;
    }
    // The chart pages and the helper, where each recipe puts them.
    let bundle = root().join(CHART_BUNDLE);
    let scratch = dir.join("charts");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let mut c = Command::new(roofline);
    c.arg("plot")
        .arg(&bundle)
        .args([
            "--format",
            "html",
            "--embed",
            "--link",
            "step-full.html",
            "-o",
        ])
        .arg(scratch.join("chart.html"));
    run("roofline plot --embed (the sites' chart)", c)?;
    let mut c = Command::new(roofline);
    c.arg("plot")
        .arg(&bundle)
        .args(["--format", "html", "-o"])
        .arg(scratch.join("step-full.html"));
    run(
        "roofline plot --format html (the full page the link opens)",
        c,
    )?;
    let helper = std::fs::read(root().join("viewer/web/embed.js"))
        .map_err(|e| format!("viewer/web/embed.js: {e}"))?;
    for (to, with_helper) in [
        ("mkdocs/docs", "mkdocs/docs/embed.js"),
        ("sphinx/charts", "sphinx/_static/embed.js"),
        ("plain", "plain/embed.js"),
    ] {
        for f in ["chart.html", "step-full.html"] {
            let bytes = std::fs::read(scratch.join(f)).map_err(|e| format!("{f}: {e}"))?;
            write(&dir.join(to).join(f), &bytes)?;
        }
        write(&dir.join(with_helper), &helper)?;
    }
    let tools = site_tools()?;
    let mut c = Command::new(tools.join("bin/mkdocs"));
    c.args(["build", "--strict", "--quiet", "-d", "site"])
        .current_dir(dir.join("mkdocs"));
    run(&format!("mkdocs build (Material {MKDOCS_MATERIAL})"), c)?;
    let mut c = Command::new(tools.join("bin/sphinx-build"));
    c.args(["-b", "html", "-q", "-W", ".", "_build/html"])
        .current_dir(dir.join("sphinx"));
    run(&format!("sphinx-build (Sphinx {SPHINX})"), c)?;
    for built in [
        "mkdocs/site/index.html",
        "mkdocs/site/chart.html",
        "mkdocs/site/embed.js",
        "sphinx/_build/html/index.html",
        "sphinx/_build/html/chart.html",
        "sphinx/_build/html/_static/embed.js",
    ] {
        if !dir.join(built).is_file() {
            return Err(format!("the docs sites: {built} was not built"));
        }
    }
    eprintln!("docs sites built under {}", dir.display());
    Ok(())
}

/// Everything above, with the wheel that [`crate::wheel::check`] built and installed (its
/// `roofline` executable): returns the Python unit tests passed and failed.
pub fn check(wheel: &Path, roofline: &Path) -> Result<(usize, usize), String> {
    let started = std::time::Instant::now();
    let counts = notebook(wheel)?;
    sites(roofline)?;
    eprintln!(
        "notebook and docs sites checked in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_are_the_marked_blocks() {
        let md = "text\n<!-- check: a/b.yml -->\n```yaml\nx: 1\n```\n\n```sh\nnot this\n```\n<!-- check: c.html -->\n\n```html\n<p>\n</p>\n```\n";
        assert_eq!(
            recipes(md),
            vec![
                ("a/b.yml".into(), "x: 1\n".into()),
                ("c.html".into(), "<p>\n</p>\n".into())
            ]
        );
    }

    #[test]
    fn unittest_closing_lines_are_counted() {
        assert_eq!(
            unittest_counts("...\nRan 12 tests in 0.3s\n\nOK\n"),
            Some((12, 0))
        );
        assert_eq!(
            unittest_counts("Ran 12 tests in 0.3s\n\nFAILED (failures=2, errors=1)\n"),
            Some((9, 3))
        );
        assert_eq!(unittest_counts("no tests"), None);
    }

    #[test]
    fn embedding_md_has_every_recipe_ci_builds() {
        let text = std::fs::read_to_string(root().join("docs/embedding.md")).unwrap();
        let paths: Vec<String> = recipes(&text).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            [
                "mkdocs/mkdocs.yml",
                "mkdocs/docs/index.md",
                "sphinx/conf.py",
                "sphinx/index.rst",
                "plain/index.html"
            ]
        );
    }
}
