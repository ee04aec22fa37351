//! An import's options, one type for every front end: `roofline import`'s flags, the page's URL
//! parameters and "Import options" form, and the import worker all read and write
//! [`ImportOptions`] as `roofline import`'s flag words (`--arch 9.0 --convention 2020
//! --allow-partial`), through its [`FromStr`] and [`Display`]; [`Convention`] and
//! [`ComputeCapability`] are its typed values, each with the one parser of its words; the
//! collectives' options (`--group-size`, `--gpus-per-node`, `--system`) are read here too. Files
//! an option names (`--counters`, `--model-config`) are paths here: the front end reads them and
//! hands their contents to the import driver.

use std::fmt;
use std::str::FromStr;

/// How counters become FLOPs and times (`--convention`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Convention {
    /// Nsight Compute's current sections: packed half2, so `hadd`, `hmul` = 2 FLOPs and
    /// `hfma` = 4; time per launch from `gpu__time_duration.sum` where collected.
    #[default]
    Current,
    /// The 2020 NERSC study: `hadd`, `hmul` = 1 FLOP and `hfma` = 2; a kernel name's time is
    /// `Σ sm__cycles_elapsed.avg / (Σ sm__cycles_elapsed.avg.per_second / launches)`.
    Study2020,
}

impl Convention {
    /// Every convention, as `--convention` lists them.
    pub const ALL: [Convention; 2] = [Convention::Current, Convention::Study2020];

    /// Its word: `current` or `2020`.
    pub fn key(self) -> &'static str {
        match self {
            Convention::Current => "current",
            Convention::Study2020 => "2020",
        }
    }

    /// What it counts, for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Convention::Current => {
                "Nsight Compute's current sections (packed half2: hfma = 4 FLOPs; per-launch gpu__time_duration)"
            }
            Convention::Study2020 => {
                "the 2020 NERSC study (hfma = 2 FLOPs; time from the cycle counters, per kernel name): reproduces its tables"
            }
        }
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for Convention {
    type Err = String;

    /// `current` or `2020`; the error is the message after `--convention `.
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.key() == s.trim())
            .ok_or_else(|| format!("{s:?}: expected current or 2020"))
    }
}

/// A CUDA compute capability, `major.minor` (`9.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    /// The major version.
    pub major: u32,
    /// The minor version.
    pub minor: u32,
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for ComputeCapability {
    type Err = String;

    /// Two unsigned numbers around a `.`; the error is the message after `--arch `.
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim()
            .split_once('.')
            .and_then(|(a, b)| {
                Some(ComputeCapability {
                    major: a.parse().ok()?,
                    minor: b.parse().ok()?,
                })
            })
            .ok_or_else(|| format!("{s:?} is not a compute capability (expected e.g. \"9.0\")"))
    }
}

/// Where an import without a measured machine takes its ceilings from (`--ceilings`,
/// `--no-datasheet`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Datasheet {
    /// The GPU catalogue's entry for the device the input names, where one fits (the default).
    #[default]
    Matched,
    /// This catalogue entry (`--ceilings datasheet:NAME`: its id or product name), refused
    /// where it contradicts the input's device.
    Named(String),
    /// None: no ceilings without `--machine` (`--no-datasheet`).
    Off,
}

/// `roofline import`'s options, whichever front end was given them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// `--arch`: the GPU's compute capability, where the inputs do not say.
    pub arch: Option<ComputeCapability>,
    /// `--convention`, when given (`current` otherwise).
    pub convention: Option<Convention>,
    /// `--allow-partial`: import an incomplete capture set, marked incomplete.
    pub allow_partial: bool,
    /// `--allow-machine-mismatch`: place the kernels against a machine of another GPU, with a
    /// note.
    pub allow_machine_mismatch: bool,
    /// `--counters`: a range-profiler trace joined with the torch.profiler trace imported (the
    /// CLI's; the page has none).
    pub counters: Option<String>,
    /// `--ceilings datasheet:NAME` or `--no-datasheet`: the datasheet ceilings of an import
    /// without `--machine`.
    pub datasheet: Datasheet,
    /// `--model-config`: the model's Hugging Face `config.json`, whose fields give the operators
    /// that do not record them (a mixture of experts' top-k and width) their F and B (the
    /// CLI's; the page has none).
    pub model_config: Option<String>,
    /// `--tensor-parallel`: the run's tensor parallelism, where the trace does not say it.
    pub tensor_parallel: Option<u64>,
    /// `--expert-parallel`: the run's expert parallelism (none when not given).
    pub expert_parallel: Option<u64>,
    /// `--group-size N`: the ranks of a collective whose own arguments do not record its group
    /// (before `distributedInfo`'s world size, which knows the default group only).
    pub group_size: Option<u32>,
    /// `--gpus-per-node N`: what tells a group within one node from one across nodes (before
    /// the `--system`'s and the trace's device list).
    pub gpus_per_node: Option<u32>,
    /// `--system NAME`: the multi-GPU node of the GPU catalogue the job ran on (a DGX), whose
    /// NVLink and network per GPU bound its collectives and whose GPUs per node place its ranks.
    pub system: Option<String>,
}

impl ImportOptions {
    /// The options as `roofline import`'s flags, one word each, in that order.
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = self.arch {
            out.extend(["--arch".to_string(), a.to_string()]);
        }
        if let Some(c) = self.convention {
            out.extend(["--convention".to_string(), c.to_string()]);
        }
        if self.allow_partial {
            out.push("--allow-partial".into());
        }
        if self.allow_machine_mismatch {
            out.push("--allow-machine-mismatch".into());
        }
        if let Some(c) = &self.counters {
            out.extend(["--counters".to_string(), c.clone()]);
        }
        match &self.datasheet {
            Datasheet::Matched => {}
            Datasheet::Named(n) => out.extend(["--ceilings".to_string(), format!("datasheet:{n}")]),
            Datasheet::Off => out.push("--no-datasheet".into()),
        }
        if let Some(m) = &self.model_config {
            out.extend(["--model-config".to_string(), m.clone()]);
        }
        if let Some(n) = self.tensor_parallel {
            out.extend(["--tensor-parallel".to_string(), n.to_string()]);
        }
        if let Some(n) = self.expert_parallel {
            out.extend(["--expert-parallel".to_string(), n.to_string()]);
        }
        if let Some(n) = self.group_size {
            out.extend(["--group-size".to_string(), n.to_string()]);
        }
        if let Some(n) = self.gpus_per_node {
            out.extend(["--gpus-per-node".to_string(), n.to_string()]);
        }
        if let Some(s) = &self.system {
            out.extend(["--system".to_string(), s.clone()]);
        }
        out
    }

    /// A count option's value (`--group-size`, `--gpus-per-node`): a whole number from 1.
    ///
    /// # Errors
    /// Anything else, in words after the option's name.
    pub fn count_value(option: &str, value: &str) -> Result<u32, String> {
        value
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{option} {value:?}: expected a whole number from 1"))
    }

    /// A parallelism's value read (`--tensor-parallel`, `--expert-parallel`): a positive
    /// number of ranks.
    ///
    /// # Errors
    /// Any other value, in words.
    pub fn ranks_value(flag: &str, value: &str) -> Result<u64, String> {
        value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("{flag} {value:?}: expected a number of ranks (1 or more)"))
    }

    /// `--ceilings`'s value read: `datasheet:NAME` names a catalogue entry.
    ///
    /// # Errors
    /// Any other value, in words.
    pub fn ceilings_value(value: &str) -> Result<Datasheet, String> {
        match value.trim().strip_prefix("datasheet:").map(str::trim) {
            Some(name) if !name.is_empty() => Ok(Datasheet::Named(name.to_string())),
            _ => Err(format!(
                "--ceilings {value:?}: expected datasheet:NAME (a GPU of `roofline catalogue`)"
            )),
        }
    }

    /// The options as flag words ([`ImportOptions::flags`]), each word with its value:
    /// `--arch` and `--convention` from their words (checked here), the switches by their
    /// presence. The error is `roofline import`'s message for the word (`--arch "nine" is not a
    /// compute capability …`).
    ///
    /// # Errors
    /// A word that is no option of `roofline import`, a value that does not parse, or an option
    /// without its value.
    pub fn from_flags<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut o = ImportOptions::default();
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            let mut value = || {
                words
                    .next()
                    .ok_or_else(|| format!("{w}: a value is missing"))
            };
            match w {
                "--arch" => o.arch = Some(value()?.parse().map_err(|e| format!("--arch {e}"))?),
                "--convention" => {
                    o.convention = Some(value()?.parse().map_err(|e| format!("--convention {e}"))?);
                }
                "--allow-partial" => o.allow_partial = true,
                "--allow-machine-mismatch" => o.allow_machine_mismatch = true,
                "--counters" => o.counters = Some(value()?.to_string()),
                "--ceilings" => o.datasheet = Self::ceilings_value(value()?)?,
                "--no-datasheet" => o.datasheet = Datasheet::Off,
                "--model-config" => o.model_config = Some(value()?.to_string()),
                "--tensor-parallel" | "--expert-parallel" => {
                    let n = Self::ranks_value(w, value()?)?;
                    if w == "--tensor-parallel" {
                        o.tensor_parallel = Some(n);
                    } else {
                        o.expert_parallel = Some(n);
                    }
                }
                "--group-size" => o.group_size = Some(Self::count_value(w, value()?)?),
                "--gpus-per-node" => o.gpus_per_node = Some(Self::count_value(w, value()?)?),
                "--system" => o.system = Some(value()?.to_string()),
                other => return Err(format!("{other:?} is not an option of roofline import")),
            }
        }
        Ok(o)
    }
}

impl fmt::Display for ImportOptions {
    /// The flags, space-separated (a `--counters` path with spaces reads back only through
    /// [`ImportOptions::flags`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.flags().join(" "))
    }
}

impl FromStr for ImportOptions {
    type Err = String;

    /// Flag words separated by blanks, as [`Display`] writes them.
    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_flags(s.split_whitespace())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_back_what_they_write() {
        let o = ImportOptions {
            arch: Some(ComputeCapability { major: 9, minor: 0 }),
            convention: Some(Convention::Study2020),
            allow_partial: true,
            allow_machine_mismatch: true,
            counters: None,
            datasheet: Datasheet::Matched,
            model_config: None,
            tensor_parallel: None,
            expert_parallel: None,
            group_size: Some(8),
            gpus_per_node: Some(4),
            system: Some("dgx-h100".into()),
        };
        let text = o.to_string();
        assert_eq!(
            text,
            "--arch 9.0 --convention 2020 --allow-partial --allow-machine-mismatch --group-size 8 --gpus-per-node 4 --system dgx-h100"
        );
        assert_eq!(text.parse::<ImportOptions>(), Ok(o));
        // The model configuration's path and the parallelism.
        let llm: ImportOptions =
            "--model-config config.json --tensor-parallel 8 --expert-parallel 1"
                .parse()
                .unwrap();
        assert_eq!(llm.model_config.as_deref(), Some("config.json"));
        assert_eq!(
            (llm.tensor_parallel, llm.expert_parallel),
            (Some(8), Some(1))
        );
        assert_eq!(
            llm.to_string(),
            "--model-config config.json --tensor-parallel 8 --expert-parallel 1"
        );
        assert_eq!(
            "--tensor-parallel 0".parse::<ImportOptions>().unwrap_err(),
            "--tensor-parallel \"0\": expected a number of ranks (1 or more)"
        );
        assert_eq!("".parse::<ImportOptions>(), Ok(ImportOptions::default()));
        let named: ImportOptions = "--ceilings datasheet:H100-SXM5".parse().unwrap();
        assert_eq!(named.datasheet, Datasheet::Named("H100-SXM5".into()));
        assert_eq!(named.to_string(), "--ceilings datasheet:H100-SXM5");
        let off: ImportOptions = "--no-datasheet".parse().unwrap();
        assert_eq!(off.to_string(), "--no-datasheet");
        assert_eq!(off.datasheet, Datasheet::Off);
        assert!(
            "--ceilings machine.json"
                .parse::<ImportOptions>()
                .unwrap_err()
                .contains("expected datasheet:NAME")
        );
        // `--convention current` given is kept as given (not the same as no option).
        let current: ImportOptions = "--convention current".parse().unwrap();
        assert_eq!(current.convention, Some(Convention::Current));
        assert_eq!(current.to_string(), "--convention current");
    }

    #[test]
    fn bad_words_get_the_clis_messages() {
        assert_eq!(
            "--arch nine".parse::<ImportOptions>().unwrap_err(),
            "--arch \"nine\" is not a compute capability (expected e.g. \"9.0\")"
        );
        assert_eq!(
            "--convention 2021".parse::<ImportOptions>().unwrap_err(),
            "--convention \"2021\": expected current or 2020"
        );
        assert!(
            "--arch"
                .parse::<ImportOptions>()
                .unwrap_err()
                .contains("a value is missing")
        );
        assert!(
            "--machine m.json"
                .parse::<ImportOptions>()
                .unwrap_err()
                .contains("not an option")
        );
        assert_eq!(
            " 8.6 ".parse::<ComputeCapability>(),
            Ok(ComputeCapability { major: 8, minor: 6 })
        );
        assert_eq!(" 2020 ".parse::<Convention>(), Ok(Convention::Study2020));
        assert_eq!(
            "--group-size 0".parse::<ImportOptions>().unwrap_err(),
            "--group-size \"0\": expected a whole number from 1"
        );
    }
}
