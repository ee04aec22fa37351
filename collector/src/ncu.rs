//! Running Nsight Compute (`ncu`): finding it, asking which metrics the GPU has, profiling a
//! program into a report, and exporting a report as CSV. Parsing the CSV is
//! `roofline_import::ncu`'s job.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Why Nsight Compute could not be used.
#[derive(Debug, thiserror::Error)]
pub enum NcuProcessError {
    /// No `ncu` executable.
    #[error(
        "Nsight Compute (ncu) not found{tried}; pass --ncu PATH or set NCU=/path/to/ncu (it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu)"
    )]
    NotFound {
        /// What was tried, for the message.
        tried: String,
    },
    /// `ncu` could not be started.
    #[error("could not run {}", path.display())]
    Spawn {
        /// The executable.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The counters are restricted to administrators.
    #[error(
        "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): by default only administrators may. \
         An administrator can allow all users with the NVIDIA driver option NVreg_RestrictProfilingToAdminUsers=0 \
         (for example `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file under /etc/modprobe.d, then reload \
         the driver or reboot), or run `roofline profile` with administrator rights; see NVIDIA's page on ERR_NVGPUCTRPERM"
    )]
    CounterPermission,
    /// `ncu --query-metrics` failed or listed no metric.
    #[error(
        "`{} --query-metrics` {detail}: without its list, roofline cannot tell which of its metrics this GPU has, and ncu stops at the first one it lacks; check that this command runs and lists the GPU's metrics",
        path.display()
    )]
    QueryMetrics {
        /// The executable.
        path: PathBuf,
        /// What went wrong: the exit status and what ncu printed, or that it listed nothing.
        detail: String,
    },
    /// `ncu --import` failed.
    #[error("ncu could not export {} as CSV (exit {status}): {stderr}", report.display())]
    Export {
        /// The report.
        report: PathBuf,
        /// Exit status.
        status: ExitStatus,
        /// What ncu printed on standard error.
        stderr: String,
    },
}

/// Finds `ncu`: the `--ncu` flag, else the `NCU` variable, else `ncu` on `PATH`, else the usual
/// CUDA install locations.
///
/// # Errors
/// [`NcuProcessError::NotFound`] listing what was tried.
pub fn find(flag: Option<&Path>) -> Result<PathBuf, NcuProcessError> {
    if let Some(p) = flag {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(NcuProcessError::NotFound {
                tried: format!(" at --ncu {}", p.display()),
            })
        };
    }
    if let Some(p) = std::env::var_os("NCU").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(NcuProcessError::NotFound {
                tried: format!(" at NCU={}", p.display()),
            })
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("ncu"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let usual = [
        PathBuf::from("/usr/local/cuda/bin/ncu"),
        PathBuf::from("/opt/nvidia/nsight-compute/ncu"),
    ];
    on_path
        .into_iter()
        .chain(usual)
        .find(|p| p.is_file())
        .ok_or_else(|| NcuProcessError::NotFound {
            tried: " on PATH or in /usr/local/cuda/bin".into(),
        })
}

/// `ncu --version`'s last line (`Version 2025.2.1.0 (build …)`), if it runs.
pub fn version(ncu: &Path) -> Option<String> {
    let out = Command::new(ncu).arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
}

/// The base names of the metrics the GPU lists (`ncu --query-metrics`): the first word of every
/// line that looks like a metric name.
///
/// # Errors
/// [`NcuProcessError::Spawn`] when ncu cannot be started; [`NcuProcessError::QueryMetrics`] when
/// it fails or lists nothing (requesting every metric of the table then would stop ncu at the
/// first one the GPU lacks: `==ERROR== Failed to find metric`).
pub fn available_metrics(ncu: &Path) -> Result<BTreeSet<String>, NcuProcessError> {
    let out = Command::new(ncu)
        .arg("--query-metrics")
        .output()
        .map_err(|source| NcuProcessError::Spawn {
            path: ncu.to_path_buf(),
            source,
        })?;
    let failed = |detail: String| NcuProcessError::QueryMetrics {
        path: ncu.to_path_buf(),
        detail,
    };
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.trim();
        return Err(failed(if said.is_empty() {
            format!("failed ({})", out.status)
        } else {
            format!("failed ({}): {said}", out.status)
        }));
    }
    let names: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains("__") && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(failed("listed no metric".into()));
    }
    Ok(names)
}

/// What to profile and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRequest {
    /// Metrics to collect.
    pub metrics: Vec<String>,
    /// `--nvtx-include` expression.
    pub nvtx: Option<String>,
    /// `--kernel-name regex:` expression.
    pub kernel_regex: Option<String>,
    /// `--launch-skip`.
    pub launch_skip: Option<u64>,
    /// `--launch-count`.
    pub launch_count: Option<u64>,
    /// The report to write (ncu adds `.ncu-rep`).
    pub report_base: PathBuf,
    /// Where ncu writes its own messages (the program's output stays on ours).
    pub log_file: PathBuf,
    /// The program and its arguments.
    pub command: Vec<String>,
}

impl ProfileRequest {
    /// The arguments of the `ncu` invocation: one run, all metrics, clocks left alone so that
    /// times compare with the measured ceilings.
    pub fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "--export".into(),
            self.report_base.display().to_string(),
            "--force-overwrite".into(),
            "--log-file".into(),
            self.log_file.display().to_string(),
            "--target-processes".into(),
            "all".into(),
            "--clock-control".into(),
            "none".into(),
            "--metrics".into(),
            self.metrics.join(","),
        ];
        if let Some(n) = &self.nvtx {
            a.extend(["--nvtx".into(), "--nvtx-include".into(), n.clone()]);
        }
        if let Some(k) = &self.kernel_regex {
            // Matched against the demangled name, as the bundle shows it (ncu's default base is
            // the bare function name, without namespaces, templates or parameters).
            a.extend([
                "--kernel-name-base".into(),
                "demangled".into(),
                "--kernel-name".into(),
                format!("regex:{k}"),
            ]);
        }
        if let Some(n) = self.launch_skip {
            a.extend(["--launch-skip".into(), n.to_string()]);
        }
        if let Some(n) = self.launch_count {
            a.extend(["--launch-count".into(), n.to_string()]);
        }
        a.push("--".into());
        a.extend(self.command.iter().cloned());
        a
    }
}

/// How the profiled run ended.
#[derive(Debug)]
pub struct ProfileOutcome {
    /// ncu's exit status (the program's, when the program failed).
    pub status: ExitStatus,
    /// ncu reported ERR_NVGPUCTRPERM.
    pub permission_denied: bool,
    /// `==ERROR==` lines ncu logged.
    pub errors: Vec<String>,
}

/// Runs the program under ncu. The program's input and output are ours (nothing is buffered, so
/// progress bars and interactive prompts work); ncu's own messages go to the log file, which is
/// echoed to standard error afterwards and searched for errors.
///
/// # Errors
/// [`NcuProcessError::Spawn`] when ncu cannot be started.
pub fn profile(ncu: &Path, request: &ProfileRequest) -> Result<ProfileOutcome, NcuProcessError> {
    let status = Command::new(ncu)
        .args(request.args())
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|source| NcuProcessError::Spawn {
            path: ncu.to_path_buf(),
            source,
        })?;
    let log = std::fs::read_to_string(&request.log_file).unwrap_or_default();
    let mut errors = Vec::new();
    for line in log.lines() {
        crate::stderr::message(line);
        if line.starts_with("==ERROR==") || line.contains("ERR_NVGPUCTRPERM") {
            errors.push(line.trim_end().to_string());
        }
    }
    Ok(ProfileOutcome {
        status,
        permission_denied: errors.iter().any(|e| e.contains("ERR_NVGPUCTRPERM")),
        errors,
    })
}

/// Exports a report as the raw CSV page in base units.
///
/// # Errors
/// [`NcuProcessError`] when ncu fails.
pub fn export_csv(ncu: &Path, report: &Path) -> Result<String, NcuProcessError> {
    let out = Command::new(ncu)
        .arg("--import")
        .arg(report)
        .args(["--csv", "--page", "raw", "--print-units", "base"])
        .output()
        .map_err(|source| NcuProcessError::Spawn {
            path: ncu.to_path_buf(),
            source,
        })?;
    if !out.status.success() {
        return Err(NcuProcessError::Export {
            report: report.to_path_buf(),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The launcher's rank of this process: `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`, `PMI_RANK` or
/// `LOCAL_RANK`, the first one set.
pub fn launcher_rank(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    RANK_VARIABLES
        .iter()
        .find_map(|n| env(n).filter(|v| !v.is_empty()))
}

/// The variables a launcher sets for the rank, in the order they are read.
const RANK_VARIABLES: [&str; 4] = [
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "LOCAL_RANK",
];

/// An output path with its placeholders filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filled {
    /// The path.
    pub path: String,
    /// For each placeholder no variable set, what it became and which variables were looked
    /// for (`{rank} is 0: none of SLURM_PROCID, … is set`), for a note.
    pub defaulted: Vec<String>,
}

/// Fills `{rank}`, `{host}` and `{device}` in an output path from the launcher's environment:
/// the rank from `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK`, `PMI_RANK` or `LOCAL_RANK` (0 outside a
/// launcher); the device from `CUDA_VISIBLE_DEVICES` (its first entry), else `SLURM_LOCALID` or
/// `LOCAL_RANK`, else 0; the host from the host name (up to its first dot). A rank or device
/// that no variable gave is listed in [`Filled::defaulted`].
///
/// # Errors
/// The name of an unknown placeholder.
pub fn fill_placeholders(
    template: &str,
    env: impl Fn(&str) -> Option<String>,
    host: &str,
) -> Result<Filled, String> {
    let first = |names: &[&str]| names.iter().find_map(|n| env(n).filter(|v| !v.is_empty()));
    let rank = launcher_rank(&env);
    let device = env("CUDA_VISIBLE_DEVICES")
        .and_then(|v| v.split(',').next().map(str::trim).map(str::to_string))
        .filter(|v| !v.is_empty())
        .or_else(|| first(&["SLURM_LOCALID", "LOCAL_RANK"]));
    let host = host.split('.').next().unwrap_or(host);
    let mut out = String::new();
    let mut defaulted = Vec::new();
    let mut default = |name: &str, value: &Option<String>, variables: &[&str]| {
        value.clone().unwrap_or_else(|| {
            let note = format!(
                "{{{name}}} is 0: none of {} is set (not run under a launcher?)",
                variables.join(", ")
            );
            if !defaulted.contains(&note) {
                defaulted.push(note);
            }
            "0".into()
        })
    };
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        match &after[..close] {
            "rank" => out.push_str(&default("rank", &rank, &RANK_VARIABLES)),
            "host" => out.push_str(host),
            "device" => out.push_str(&default(
                "device",
                &device,
                &["CUDA_VISIBLE_DEVICES", "SLURM_LOCALID", "LOCAL_RANK"],
            )),
            other => {
                return Err(format!(
                    "unknown placeholder {{{other}}} in the output path; use {{rank}}, {{host}} or {{device}}"
                ));
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    // Keep what was substituted usable in a file name.
    Ok(Filled {
        path: out.replace(['\n', '\0'], "_"),
        defaulted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn placeholders_from_slurm_and_mpi() {
        let path = |t: &str, vars: &[(&str, &str)], host: &str| {
            fill_placeholders(t, env(vars), host).unwrap().path
        };
        let slurm = [("SLURM_PROCID", "12"), ("SLURM_LOCALID", "3")];
        assert_eq!(
            path(
                "run-{rank}-{host}-gpu{device}.json",
                &slurm,
                "nid001.cluster"
            ),
            "run-12-nid001-gpu3.json"
        );
        let mpi = [
            ("OMPI_COMM_WORLD_RANK", "5"),
            ("CUDA_VISIBLE_DEVICES", "2,3"),
        ];
        assert_eq!(path("r{rank}d{device}", &mpi, "h"), "r5d2");
        assert_eq!(path("plain.json", &[], "h"), "plain.json");
        assert_eq!(path("odd{.json", &[], "h"), "odd{.json");
        let e = fill_placeholders("r{node}.json", env(&[]), "h").unwrap_err();
        assert!(e.contains("unknown placeholder {node}"), "{e}");
    }

    #[test]
    fn a_placeholder_filled_by_its_default_is_said() {
        // Outside a launcher `{rank}` is 0: said, never silent.
        let f = fill_placeholders("r{rank}.json", env(&[]), "h").unwrap();
        assert_eq!(f.path, "r0.json");
        assert_eq!(f.defaulted.len(), 1, "{:?}", f.defaulted);
        assert!(
            f.defaulted[0].contains("{rank} is 0")
                && f.defaulted[0]
                    .contains("SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, LOCAL_RANK"),
            "{:?}",
            f.defaulted
        );
        let f = fill_placeholders("d{device}.json", env(&[]), "h").unwrap();
        assert!(
            f.defaulted[0].contains("{device} is 0"),
            "{:?}",
            f.defaulted
        );
        // Set by a launcher, or not asked for: nothing to say.
        let f = fill_placeholders("r{rank}.json", env(&[("PMI_RANK", "2")]), "h").unwrap();
        assert!(f.defaulted.is_empty());
        assert!(
            fill_placeholders("r.json", env(&[]), "h")
                .unwrap()
                .defaulted
                .is_empty()
        );
    }

    #[test]
    fn ncu_arguments() {
        let r = ProfileRequest {
            metrics: vec!["dram__bytes.sum".into(), "gpu__time_duration.sum".into()],
            nvtx: Some("train_step/".into()),
            kernel_regex: Some("gemm".into()),
            launch_skip: Some(10),
            launch_count: Some(100),
            report_base: PathBuf::from("/tmp/r"),
            log_file: PathBuf::from("/tmp/log"),
            command: vec!["python".into(), "train.py".into()],
        };
        let a = r.args().join(" ");
        assert_eq!(
            a,
            "--export /tmp/r --force-overwrite --log-file /tmp/log --target-processes all --clock-control none \
             --metrics dram__bytes.sum,gpu__time_duration.sum --nvtx --nvtx-include train_step/ \
             --kernel-name-base demangled --kernel-name regex:gemm --launch-skip 10 --launch-count 100 -- python train.py"
        );
    }
}
