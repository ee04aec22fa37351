//! Why Nsight Compute output could not be imported: every refusal names the file, line or launch.

/// Why Nsight Compute output could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NcuError {
    /// No table in the text.
    #[error(
        "{source_name}: no Nsight Compute table found (a CSV header line starting with \"ID\" and naming \"Kernel Name\"); was it written with `ncu --csv`?"
    )]
    NoTable {
        /// The file.
        source_name: String,
    },
    /// A column every form has is missing.
    #[error("{source_name}: the table has no {column:?} column")]
    MissingColumn {
        /// The file.
        source_name: String,
        /// The column.
        column: &'static str,
    },
    /// A launch ID that is not a number.
    #[error("{source_name}, line {line}: launch ID {value:?} is not a whole number")]
    BadId {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The text.
        value: String,
    },
    /// A launch whose kernel name is empty (a bundle names every kernel).
    #[error("{source_name}, line {line}: launch {id} has no kernel name")]
    NoKernelName {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The launch ID.
        id: u64,
    },
    /// A metric value that is not a number.
    #[error("{source_name}, line {line}: {metric} = {value:?} is not a number")]
    BadValue {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The text.
        value: String,
    },
    /// A unit we cannot convert.
    #[error("{source_name}, line {line}: unknown unit {unit:?} for {metric}")]
    BadUnit {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The unit.
        unit: String,
    },
    /// A value with commas that are not thousands separators.
    #[error(
        "{source_name}, line {line}: {metric} = {value:?}: a comma here is not a thousands separator (groups of three digits); a decimal comma or a merged column cannot be read safely"
    )]
    BadSeparator {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The text.
        value: String,
    },
    /// A unit that does not measure what the metric counts.
    #[error(
        "{source_name}, line {line}: unit {unit:?} does not fit {metric}, which counts {expected}"
    )]
    UnitMismatch {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The unit.
        unit: String,
        /// What the metric counts.
        expected: &'static str,
    },
    /// A launch ID (or a launch's metric) given twice in one file.
    #[error(
        "{source_name}, line {line}: launch {id}{metric} appears a second time (first at line {first_line}); a file must hold one run: were two captures concatenated?"
    )]
    DuplicateLaunch {
        /// The file.
        source_name: String,
        /// The line of the second occurrence.
        line: usize,
        /// The line of the first.
        first_line: usize,
        /// The launch ID.
        id: u64,
        /// `" (metric m)"` on the details page, else empty.
        metric: String,
    },
    /// A second table header inside the table.
    #[error(
        "{source_name}, line {line}: a second table header: the file holds two runs concatenated; keep one run per file"
    )]
    SecondHeader {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
    },
    /// A file that ends inside a table row.
    #[error(
        "{source_name}, line {line}: the file ends inside a table row: it was cut short; capture it again, or pass --allow-partial to import the complete rows, marked incomplete"
    )]
    CutShort {
        /// The file.
        source_name: String,
        /// The line of the partial row.
        line: usize,
    },
    /// A capture of a set that lacks launches the others hold.
    #[error(
        "{source_name} holds {holds} of the {total} launches of this capture set; the first missing is launch {id} ({name}): the file was cut short or captured with a launch limit; capture it again, or pass --allow-partial to import what is there, marked incomplete"
    )]
    MissingLaunches {
        /// The file.
        source_name: String,
        /// Launches it holds.
        holds: usize,
        /// Launches in the set.
        total: usize,
        /// The first launch ID missing.
        id: u64,
        /// Its kernel name (from another file).
        name: String,
    },
    /// Captures that cannot be joined.
    #[error(
        "{first} and {second} both hold {metric}: they look like separate runs, not one run split by metric; import each on its own and join the bundles with `roofline merge`"
    )]
    OverlappingCaptures {
        /// One file.
        first: String,
        /// The other.
        second: String,
        /// A metric both hold.
        metric: String,
    },
    /// Launch IDs that disagree between captures of one run.
    #[error(
        "launch {id} is {first_name:?} in {first} but {second_name:?} in {second}: the files are not captures of the same run"
    )]
    MismatchedLaunch {
        /// The launch ID.
        id: u64,
        /// One file.
        first: String,
        /// Its kernel name.
        first_name: String,
        /// The other file.
        second: String,
        /// Its kernel name.
        second_name: String,
    },
    /// A capture without any metric the roofline uses.
    #[error(
        "{source_name}: none of the metrics the roofline needs is in this file (it has {found}); collect them with `roofline profile`, or with ncu --metrics and the names in docs/ncu-metrics.md"
    )]
    NoRooflineMetrics {
        /// The file.
        source_name: String,
        /// What it has instead, abbreviated.
        found: String,
    },
    /// A launch without any time metric.
    #[error(
        "launch {id} ({name}) has no time: collect gpu__time_duration.sum, or sm__cycles_elapsed.avg with sm__cycles_elapsed.avg.per_second"
    )]
    NoTime {
        /// The launch ID.
        id: u64,
        /// Its kernel name.
        name: String,
    },
}
