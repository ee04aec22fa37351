//! Hostile surroundings, through the binary: closed and full standard streams, inputs that are
//! not regular files, outputs that are an input, a device, a FIFO or a symlink, a file-size limit,
//! and `merge` given the same bundle twice or a bundle with one of its own parts (issue 13).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_roofline");

mod common;
use common::{cmd, roofline};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn v100() -> PathBuf {
    repo().join("tests/fixtures/bundles/v100-deepcam-example.json")
}

fn ncu_csv() -> PathBuf {
    repo().join("tests/fixtures/ncu/nersc-v100-deepcam/out.dram__bytes.sum.csv")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Waits at most `limit` for the child; kills it and fails the test if it is still running.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> (ExitStatus, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (status, String::from_utf8_lossy(&out.stderr).into_owned());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A pipe whose reading end is already closed: every write to the other end fails with EPIPE.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
    assert!(ok, "mkfifo {}", p.display());
}

#[test]
fn stdout_on_a_full_device_is_a_clear_error() {
    let f = v100();
    for args in [
        vec!["validate", arg(&f)],
        vec!["info", arg(&f)],
        vec!["info", arg(&f), "--format", "csv", "-o", "-"],
        vec!["--help"],
    ] {
        let o = cmd(&args).stdout(dev_full()).output().unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.starts_with("error: cannot write to standard output: No space left on device"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
}

#[test]
fn a_closed_stdout_pipe_ends_quietly() {
    let f = v100();
    // `roofline validate $(yes S | head -50) | head -1`, with the reader gone before the start.
    let mut args = vec!["validate"];
    args.extend(std::iter::repeat_n(arg(&f), 50));
    for args in [
        args,
        vec!["info", arg(&f), "--format", "json"],
        vec!["--help"],
    ] {
        let o = cmd(&args).stdout(closed_pipe()).output().unwrap();
        assert_eq!(o.status.code(), Some(141), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_closed_or_full_stderr_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let svg = dir.path().join("h.svg");
    let f = v100();
    for (stderr_is_pipe, args, code) in [
        (true, vec!["validate", arg(&bad)], 1),
        (false, vec!["validate", arg(&bad)], 1),
        (true, vec!["plot", arg(&f), "-o", arg(&svg)], 0),
        (false, vec!["plot", arg(&f), "-o", arg(&svg)], 0),
        (true, vec!["machine"], 1),
        (false, vec!["import", "/nonexistent.csv"], 1),
    ] {
        let mut c = cmd(&args);
        if stderr_is_pipe {
            c.stderr(closed_pipe());
        } else {
            c.stderr(dev_full());
        }
        let o = c.output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "{args:?} (pipe: {stderr_is_pipe})"
        );
    }
    assert!(svg.is_file());
}

#[test]
fn inputs_that_are_not_regular_files_are_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    let out = dir.path().join("out.json");
    let f = v100();
    for (args, expected) in [
        (
            vec!["validate", "/dev/zero"],
            "error: cannot read /dev/zero: it is a character device, not a regular file",
        ),
        (
            vec!["import", "/dev/zero", "-o", arg(&out)],
            "error: cannot read /dev/zero: it is a character device, not a regular file",
        ),
        (
            vec!["validate", arg(&fifo)],
            "it is a FIFO, not a regular file",
        ),
        (vec!["info", arg(&fifo)], "it is a FIFO, not a regular file"),
        (
            vec!["import", arg(&fifo), "-o", arg(&out)],
            "it is a FIFO, not a regular file",
        ),
        (
            vec!["merge", arg(&f), arg(&fifo), "-o", arg(&out)],
            "it is a FIFO, not a regular file",
        ),
        (
            vec!["validate", arg(dir.path())],
            "it is a directory, not a regular file",
        ),
    ] {
        let child = cmd(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (status, e) = wait_bounded(child, Duration::from_secs(20), &format!("{args:?}"));
        assert_eq!(status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains(expected), "{args:?}: {e}");
    }
    assert!(!out.exists());
}

#[test]
fn an_output_that_is_one_of_the_inputs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    std::fs::copy(v100(), &a).unwrap();
    let original = std::fs::read(&a).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let hard = dir.path().join("hard.json");
    std::fs::hard_link(&a, &hard).unwrap();
    let csv = dir.path().join("in.csv");
    std::fs::copy(ncu_csv(), &csv).unwrap();
    let csv_before = std::fs::read(&csv).unwrap();
    let b = dir.path().join("b.json");
    let mut other = roofline_model::parse_bundle(&String::from_utf8_lossy(&original)).unwrap();
    other.description = Some("another run".into());
    std::fs::write(&b, roofline_model::to_json(&other).unwrap()).unwrap();

    let b_before = std::fs::read(&b).unwrap();
    let b_link = dir.path().join("b-link.json");
    std::os::unix::fs::symlink(&b, &b_link).unwrap();
    let b_html = dir.path().join("b.html");
    std::os::unix::fs::symlink(&b, &b_html).unwrap();
    let dot = format!("{}/./a.json", dir.path().display());
    let cases: Vec<Vec<&str>> = vec![
        vec!["info", arg(&a), "--format", "csv", "-o", arg(&a)],
        vec!["info", arg(&a), "--format", "csv", "-o", &dot],
        vec!["info", arg(&a), "--format", "json", "-o", arg(&link)],
        vec!["info", arg(&a), "-o", arg(&hard)],
        vec!["merge", arg(&a), arg(&b), "-o", &dot],
        vec!["merge", arg(&b), arg(&a), "-o", arg(&hard)],
        vec!["import", arg(&csv), "-o", arg(&csv)],
        vec!["import", arg(&csv), "--machine", arg(&a), "-o", arg(&link)],
        vec!["suite", "gemm", "--machine", arg(&a), "-o", arg(&hard)],
        vec!["profile", "--machine", arg(&a), "-o", arg(&a), "--", "true"],
        // Every input, not only the first: the baseline, a machine, a counter trace (issue 29).
        vec!["info", arg(&a), "--baseline", arg(&b), "-o", arg(&b)],
        vec![
            "info",
            arg(&a),
            "--baseline",
            arg(&b),
            "--format",
            "csv",
            "-o",
            arg(&b_link),
        ],
        vec!["plot", arg(&a), "--baseline", arg(&b), "-o", arg(&b_html)],
        vec!["import", arg(&csv), "--machine", arg(&b), "-o", arg(&b)],
        vec![
            "import",
            arg(&csv),
            "--counters",
            arg(&b),
            "-o",
            arg(&b_link),
        ],
        vec!["suite", "gemm", "--machine", arg(&b), "-o", arg(&b_link)],
    ];
    for args in cases {
        let o = roofline(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.contains("is the input"), "{args:?}: {e}");
        assert!(e.contains("write to another file"), "{args:?}: {e}");
    }
    assert_eq!(std::fs::read(&a).unwrap(), original);
    assert_eq!(std::fs::read(&csv).unwrap(), csv_before);
    assert_eq!(std::fs::read(&b).unwrap(), b_before);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    // The svg check does not get in the way: a symlink named *.svg onto the bundle is refused too.
    let svg_link = dir.path().join("chart.svg");
    std::os::unix::fs::symlink(&a, &svg_link).unwrap();
    let o = roofline(&["plot", arg(&a), "-o", arg(&svg_link)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), original);
}

/// A character device node like `/dev/null` (1, 3) made inside `dir`, where the system allows
/// it (as root): a faulty build that replaced its target would replace this copy, never the
/// system's `/dev/null` (as the build before this test did, run as root).
fn device_node(dir: &Path) -> Option<PathBuf> {
    let p = dir.join("null");
    let made = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    made.then_some(p)
}

#[test]
fn outputs_onto_devices_and_fifos_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.csv");
    mkfifo(&fifo);
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let node = device_node(&sub);
    let f = v100();
    let mut cases = vec![(arg(&fifo), "a FIFO"), (arg(&sub), "a directory")];
    if let Some(n) = &node {
        cases.push((arg(n), "a character device"));
    } else {
        eprintln!("mknod is not allowed here: the device-node case is left out");
    }
    for (target, kind) in cases {
        let o = roofline(&["info", arg(&f), "--format", "csv", "-o", target]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{target}: {e}");
        assert!(
            e.contains(&format!(
                "cannot write {target}: it is {kind}, not a regular file"
            )),
            "{target}: {e}"
        );
        assert!(e.contains("-o -"), "{e}");
    }
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo_like()
    );
    assert_eq!(names(dir.path()), vec!["out.csv", "sub"]);
    // Refused before any measurement: `machine -o FIFO` never gets to the GPU.
    let o = roofline(&["machine", "-o", arg(&fifo)]);
    assert!(
        stderr(&o).starts_with(&format!("error: cannot write {}: it is a FIFO", arg(&fifo))),
        "{}",
        stderr(&o)
    );
    if let Some(n) = node {
        use std::os::unix::fs::FileTypeExt;
        let t = std::fs::symlink_metadata(n).unwrap().file_type();
        assert!(t.is_char_device());
    }
}

trait FifoLike {
    fn is_fifo_like(&self) -> bool;
}

impl FifoLike for std::fs::FileType {
    fn is_fifo_like(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.is_fifo()
    }
}

#[test]
fn writing_through_a_symlink_keeps_the_link_and_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let f = v100();
    let real = dir.path().join("real.csv");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("link.csv");
    std::os::unix::fs::symlink("real.csv", &link).unwrap();
    let o = roofline(&["info", arg(&f), "--format", "csv", "-o", arg(&link)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("name,launches,"), "{text}");
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);

    // A group-writable file stays so, whatever the umask says.
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o664)).unwrap();
    let o = roofline(&["info", arg(&f), "--format", "json", "-o", arg(&real)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o664);

    // A dangling symlink: the file it names is created, the link kept.
    let dangling = dir.path().join("later.json");
    std::os::unix::fs::symlink("made.json", &dangling).unwrap();
    let o = roofline(&["info", arg(&f), "--format", "json", "-o", arg(&dangling)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
    assert!(dir.path().join("made.json").is_file());
    assert_eq!(
        names(dir.path()),
        vec!["later.json", "link.csv", "made.json", "real.csv"]
    );
}

#[test]
fn dash_means_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let f = v100();
    let o = cmd(&["info", arg(&f), "--format", "csv", "-o", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("name,launches,"));
    let o = cmd(&["plot", arg(&f), "-o", "-"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("<svg"));
    let ncu = repo().join("tests/fixtures/ncu/nersc-v100-deepcam");
    let files = [
        "out.dram__bytes.sum.csv",
        "out.sm__cycles_elapsed.avg.csv",
        "out.sm__cycles_elapsed.avg.per_second.csv",
    ]
    .map(|f| ncu.join(f));
    let mut args = vec!["import", "--arch", "7.0", "-o", "-"];
    args.extend(files.iter().map(|f| arg(f)));
    let o = cmd(&args).current_dir(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let b = roofline_model::parse_bundle(&String::from_utf8_lossy(&o.stdout)).unwrap();
    assert!(!b.kernels.is_empty());
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn a_file_size_limit_is_an_error_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("keep.csv");
    std::fs::write(&out, "previous").unwrap();
    // `ulimit -f 1`: one block (512 or 1024 bytes); the CSV is several kilobytes.
    let script = format!(
        "ulimit -f 1 && exec {BIN} info {} --format csv -o {}",
        arg(&v100()),
        arg(&out)
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .env("LD_LIBRARY_PATH", "/nonexistent")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{:?}: {e}", o.status);
    assert!(
        e.starts_with(&format!(
            "error: cannot write {}: File too large",
            out.display()
        )),
        "{e}"
    );
    assert_eq!(names(dir.path()), vec!["keep.csv"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous");
}

/// Writes `b` (the V100 fixture with another description, and its kernels tagged with it as
/// their rank: another bundle, of another run) to `dir/name`.
fn variant(dir: &Path, name: &str, description: &str) -> PathBuf {
    let mut b = roofline_model::parse_bundle(&std::fs::read_to_string(v100()).unwrap()).unwrap();
    b.description = Some(description.into());
    for k in &mut b.kernels {
        k.tags.insert("rank".into(), description.into());
    }
    let p = dir.join(name);
    std::fs::write(&p, roofline_model::to_json(&b).unwrap()).unwrap();
    p
}

#[test]
fn merge_refuses_the_same_bundle_twice_and_a_bundle_with_its_own_parts() {
    let dir = tempfile::tempdir().unwrap();
    let a = variant(dir.path(), "a.json", "rank 0");
    let b = variant(dir.path(), "b.json", "rank 1");
    let c = variant(dir.path(), "c.json", "rank 2");
    // The same content under another name, and pretty-printed: still the same bundle.
    let copy = dir.path().join("copy.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    std::fs::write(&copy, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let never = dir.path().join("never.json");
    for (inputs, expected) in [
        (vec![&a, &a], "a.json and "),
        (vec![&a, &copy], "copy.json hold the same bundle"),
    ] {
        let mut args = vec!["merge"];
        args.extend(inputs.iter().map(|p| arg(p)));
        args.extend(["-o", arg(&never)]);
        let o = roofline(&args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains(expected), "{e}");
        assert!(e.contains("every launch would count twice"), "{e}");
    }
    assert!(!never.exists());

    let ab = dir.path().join("ab.json");
    let o = roofline(&["merge", arg(&a), arg(&b), "-o", arg(&ab)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = roofline_model::parse_bundle(&std::fs::read_to_string(&ab).unwrap()).unwrap();
    // Each part's identity and its run's.
    assert_eq!(merged.provenance.merged_from.len(), 4);
    // A merged bundle with one of its parts, directly or through a later merge.
    let abc = dir.path().join("abc.json");
    let o = roofline(&["merge", arg(&ab), arg(&c), "-o", arg(&abc)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (x, y) in [(&ab, &a), (&b, &ab), (&abc, &b), (&c, &abc), (&abc, &ab)] {
        let o = roofline(&["merge", arg(x), arg(y), "-o", arg(&never)]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("already holds"), "{e}");
        assert!(e.contains("every launch would count twice"), "{e}");
    }
    // Two merged bundles that share a part.
    let bc = dir.path().join("bc.json");
    let o = roofline(&["merge", arg(&b), arg(&c), "-o", arg(&bc)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = roofline(&["merge", arg(&ab), arg(&bc), "-o", arg(&never)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("both hold"), "{e}");
    assert!(!never.exists());
}

#[test]
fn import_refuses_the_same_file_twice() {
    let dir = tempfile::tempdir().unwrap();
    let csv = ncu_csv();
    let link = dir.path().join("again.csv");
    std::os::unix::fs::symlink(&csv, &link).unwrap();
    let out = dir.path().join("out.json");
    let o = roofline(&["import", arg(&csv), arg(&link), "-o", arg(&out)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("are the same file"), "{e}");
    assert!(!out.exists());
}

/// Issue 29: launch counts whose sum leaves a `u64` wrapped in totals ("233 launches") while the
/// rows saturated. Every sum is checked where a bundle is read or written: two bundles whose
/// launches together pass 2^64 − 1 are not merged into one no total could count.
#[test]
fn merge_refuses_launches_no_total_could_count() {
    let dir = tempfile::tempdir().unwrap();
    let big = |name: &str, description: &str| {
        let mut b =
            roofline_model::parse_bundle(&std::fs::read_to_string(v100()).unwrap()).unwrap();
        b.description = Some(description.into());
        b.kernels.truncate(1);
        b.kernels[0].launches = 1 << 63;
        b.kernels[0].tags.insert("rank".into(), description.into());
        let p = dir.path().join(name);
        std::fs::write(&p, roofline_model::to_json(&b).unwrap()).unwrap();
        p
    };
    let (a, b) = (big("a.json", "rank 0"), big("b.json", "rank 1"));
    let out = dir.path().join("ab.json");
    let o = roofline(&["merge", arg(&a), arg(&b), "-o", arg(&out)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("`$.kernels[1].launches`: the launches of all kernel entries up to this one sum beyond 18446744073709551615"),
        "{e}"
    );
    assert!(!out.exists());
}
