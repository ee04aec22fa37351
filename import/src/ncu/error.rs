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
    /// A value whose unit has a scale (a time, a rate, bytes, cycles) given without one.
    #[error(
        "{source_name}, line {line}: {metric} = {value:?} has no unit ({why}): {}'s scale is not known without one ({}); export the raw page with its units row (`ncu --import REPORT --csv --page raw`), or write the unit in",
        scale.what,
        scale.hint
    )]
    NoUnit {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The value as written.
        value: String,
        /// No units row, or an empty cell.
        why: &'static str,
        /// What the metric is and what its unit may be.
        scale: &'static Scale,
    },
    /// A negative value (every metric read is a count, a time or a rate).
    #[error(
        "{source_name}, line {line}: {metric} = {value:?} is negative; a time, count or rate cannot be"
    )]
    Negative {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The value as written.
        value: String,
    },
    /// One metric in two columns of a raw page.
    #[error(
        "{source_name}, line {line}: {metric} has two columns ({first} and {second}): which one holds the value cannot be told; keep one"
    )]
    DuplicateColumn {
        /// The file.
        source_name: String,
        /// The header's line.
        line: usize,
        /// The metric.
        metric: String,
        /// The first column, 1-based.
        first: usize,
        /// The second column, 1-based.
        second: usize,
    },
    /// One launch's metric with two different values on a details page.
    #[error(
        "{source_name}, line {line}: launch {id} has {metric} = {second} here but {first} at line {first_line}: which one holds cannot be told"
    )]
    ConflictingValues {
        /// The file.
        source_name: String,
        /// The second value's line.
        line: usize,
        /// The first value's line.
        first_line: usize,
        /// The launch ID.
        id: u64,
        /// The metric.
        metric: String,
        /// The first value, SI base units.
        first: f64,
        /// The second value, SI base units.
        second: f64,
    },
    /// A details page whose rows of one launch name two kernels.
    #[error(
        "{source_name}, line {line}: launch {id} is kernel {second:?} here but {first:?} at line {first_line}: one launch runs one kernel; were two captures concatenated?"
    )]
    NameChanged {
        /// The file.
        source_name: String,
        /// The line naming the second kernel.
        line: usize,
        /// The launch's first line.
        first_line: usize,
        /// The launch ID.
        id: u64,
        /// The kernel its first line names (shortened).
        first: String,
        /// The kernel this line names (shortened).
        second: String,
    },
    /// A details page without one of its three metric columns.
    #[error(
        "{source_name}: the table has {present} columns but no {missing}: a details page needs \"Metric Name\", \"Metric Unit\" and \"Metric Value\""
    )]
    IncompleteDetails {
        /// The file.
        source_name: String,
        /// The metric columns it has, quoted.
        present: String,
        /// Those it lacks, quoted.
        missing: String,
    },
    /// A line that starts as a launch row but is broken.
    #[error(
        "{source_name}, line {line}: a launch row that {what}: a broken row; fix or capture it again, or pass --allow-partial to import the other rows, marked incomplete"
    )]
    BrokenRow {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// What is wrong with it.
        what: String,
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
    /// A launch whose time metrics are there but give no positive time.
    #[error("launch {id} ({name}) has no positive time: {found}; a kernel's time must be positive")]
    NoPositiveTime {
        /// The launch ID.
        id: u64,
        /// Its kernel name.
        name: String,
        /// The time metrics it has, with their values, and what is missing.
        found: String,
    },
    /// Launches without a positive time among timed ones: left out, each would be missing
    /// from every total.
    #[error(
        "{first}; {launches} launch{} without a positive time would be left out of every total: capture {} again, or pass --allow-partial to import the others, marked incomplete",
        if *launches == 1 { "" } else { "es" },
        if *launches == 1 { "it" } else { "them" }
    )]
    Untimed {
        /// How many launches.
        launches: usize,
        /// Why the first has no time.
        first: Box<NcuError>,
    },
    /// A figure made of a launch's counters beyond the largest double.
    #[error(
        "{at}: its {figure} come to more than the largest double (about 1.8e308): no such count can be right; check its counters"
    )]
    Overflow {
        /// The launch, with where it was read (`FILE, line N: launch ID (NAME)`, `event N
        /// (cuda_profiler_range "NAME")`).
        at: String,
        /// The figure (`FP32 FLOPs`, `HBM bytes`, `time`).
        figure: String,
    },
    /// A value below the smallest positive number a double holds (it would read as zero).
    #[error(
        "{source_name}, line {line}: {metric} = {value:?} is below the smallest positive number a double holds (about 4.9e-324 in SI units): it cannot be read without becoming zero"
    )]
    Underflow {
        /// The file.
        source_name: String,
        /// The line.
        line: usize,
        /// The metric.
        metric: String,
        /// The value as written.
        value: String,
    },
}

/// What a metric whose values have a scale is, and what its unit may be, for
/// [`NcuError::NoUnit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    /// `a time`, `a rate`…
    pub what: &'static str,
    /// What its unit may be.
    pub hint: &'static str,
}
