//! `roofline export --format parquet`: a bundle's kernel table and operator table as typed
//! Parquet, for query engines (DuckDB, Spark, a warehouse): one row per kernel name (or per
//! operator) and device, with the run's and the device's identities and every figure of
//! `roofline info --format csv` ([`InfoRow`]), typed (floats as DOUBLE, counts as BIGINT, words
//! as STRING), unknown figures as nulls. [`COLUMNS`] is the schema, documented in
//! `docs/fleet.md`; columns are only ever appended.

use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use roofline_model::Bundle;
use roofline_model::analysis::report::{InfoRow, Report};

/// Which table a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// One row per kernel name and device.
    Kernels,
    /// One row per PyTorch operator and device (torch.profiler imports).
    Operators,
}

impl Table {
    /// The table's name: its folder in the export and the `table` column's value.
    pub fn name(self) -> &'static str {
        match self {
            Table::Kernels => "kernels",
            Table::Operators => "operators",
        }
    }
}

/// The run a table belongs to: its identity in every row.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The bundle's content digest ([`roofline_model::bundle::merge::digest`]): the same run
    /// read from any copy has the same id.
    pub id: String,
    /// The run's name: the bundle file's stem.
    pub name: String,
}

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text.
    Text,
    /// A signed 64-bit count.
    Count,
    /// A 64-bit float.
    Figure,
}

/// One row's values, as the writer takes them.
enum Value {
    Text(Option<String>),
    Count(Option<i64>),
    Figure(Option<f64>),
}

/// The schema: every column's name and type, in order. Columns are only ever appended.
pub const COLUMNS: [(&str, Kind); 41] = [
    ("table", Kind::Text),
    ("run_id", Kind::Text),
    ("run", Kind::Text),
    ("created", Kind::Text),
    ("host", Kind::Text),
    ("device", Kind::Text),
    ("device_name", Kind::Text),
    ("rank", Kind::Count),
    ("name", Kind::Text),
    ("display_name", Kind::Text),
    ("launches", Kind::Count),
    ("time_s", Kind::Figure),
    ("share", Kind::Figure),
    ("flops", Kind::Figure),
    ("flops_tensor", Kind::Figure),
    ("bytes_l1", Kind::Figure),
    ("bytes_l2", Kind::Figure),
    ("bytes_hbm", Kind::Figure),
    ("ai_l1", Kind::Figure),
    ("ai_l2", Kind::Figure),
    ("ai_hbm", Kind::Figure),
    ("flop_per_s", Kind::Figure),
    ("bound", Kind::Text),
    ("headroom", Kind::Figure),
    ("t_bound_s", Kind::Figure),
    ("region", Kind::Text),
    ("attainable_flop_per_s", Kind::Figure),
    ("peak_flop_per_s", Kind::Figure),
    ("gap", Kind::Figure),
    ("complexity_flops", Kind::Figure),
    ("complexity_bytes", Kind::Figure),
    ("complexity_source", Kind::Text),
    ("missing_peaks", Kind::Text),
    ("binding_ceiling", Kind::Text),
    ("ceiling_source", Kind::Text),
    ("calls", Kind::Count),
    ("flops_per_call", Kind::Figure),
    ("bytes_per_call", Kind::Figure),
    ("ceilings_from", Kind::Text),
    ("complete", Kind::Text),
    ("schema_version", Kind::Count),
];

/// The Arrow schema of [`COLUMNS`] (every column nullable).
pub fn schema() -> Schema {
    Schema::new(
        COLUMNS
            .iter()
            .map(|(name, kind)| {
                let t = match kind {
                    Kind::Text => DataType::Utf8,
                    Kind::Count => DataType::Int64,
                    Kind::Figure => DataType::Float64,
                };
                Field::new(*name, t, true)
            })
            .collect::<Vec<_>>(),
    )
}

/// A count as the table holds it: a BIGINT (`u64` counts beyond it are not a launch count any
/// bundle holds; the reader refuses them first).
fn count(n: u64) -> Option<i64> {
    i64::try_from(n).ok()
}

/// One row: the run's and device's identities, then the figures of `r`.
fn values(table: Table, run: &Run, bundle: &Bundle, r: &InfoRow, rank: Option<i64>) -> Vec<Value> {
    use Value::{Count, Figure, Text};
    let device = r.device.as_deref();
    let dev = device.and_then(|d| bundle.devices.iter().find(|x| x.id == d));
    let ceilings = roofline_model::analysis::ceilings::Ceilings::of_device(bundle, device)
        .and_then(|c| c.origin_words());
    let text = |s: &str| Text(Some(s.to_string()));
    let opt = |s: Option<&str>| Text(s.map(str::to_string));
    vec![
        text(table.name()),
        text(&run.id),
        text(&run.name),
        opt(bundle.provenance.created.as_deref()),
        opt(bundle.provenance.host.as_deref()),
        opt(device),
        opt(dev.map(|d| d.name.as_str())),
        Count(rank),
        text(&r.name),
        text(&r.display_name),
        Count(count(r.launches)),
        Figure(Some(r.time_s)),
        Figure(Some(r.share)),
        Figure(r.flops),
        Figure(r.flops_tensor),
        Figure(r.bytes_l1),
        Figure(r.bytes_l2),
        Figure(r.bytes_hbm),
        Figure(r.ai_l1),
        Figure(r.ai_l2),
        Figure(r.ai_hbm),
        Figure(r.flop_per_s),
        opt(r.bound),
        Figure(r.headroom),
        Figure(r.t_bound_s),
        opt(r.region),
        Figure(r.attainable_flop_per_s),
        Figure(r.peak_flop_per_s),
        Figure(r.gap),
        Figure(r.complexity_flops),
        Figure(r.complexity_bytes),
        opt(r.complexity_source),
        Text((!r.missing_peaks.is_empty()).then(|| r.missing_peaks.clone())),
        opt(r.binding_ceiling),
        opt(r.ceiling_source),
        Count(r.calls.and_then(count)),
        Figure(r.flops_per_call),
        Figure(r.bytes_per_call),
        Text(ceilings),
        text(if bundle.complete { "true" } else { "false" }),
        Count(Some(i64::from(bundle.schema_version))),
    ]
}

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    /// Arrow refused the columns (a bug: the schema and the rows disagree).
    #[error("the {table} table's columns: {source}")]
    Arrow {
        /// The table.
        table: &'static str,
        /// Arrow's error.
        source: arrow_schema::ArrowError,
    },
    /// The Parquet writer failed.
    #[error("writing the {table} table as Parquet: {source}")]
    Parquet {
        /// The table.
        table: &'static str,
        /// The writer's error.
        source: parquet::errors::ParquetError,
    },
}

/// The `table` of `bundle` (already grouped as the table asks: per kernel name, or per
/// operator) as the bytes of one Parquet file, Snappy-compressed.
///
/// # Errors
/// [`ParquetError`].
pub fn to_parquet(table: Table, run: &Run, bundle: &Bundle) -> Result<Vec<u8>, ParquetError> {
    let report = Report::new(bundle);
    let rows = report.rows(bundle);
    let mut text: Vec<StringBuilder> = Vec::new();
    let mut counts: Vec<Int64Builder> = Vec::new();
    let mut figures: Vec<Float64Builder> = Vec::new();
    for (_, kind) in COLUMNS {
        match kind {
            Kind::Text => text.push(StringBuilder::new()),
            Kind::Count => counts.push(Int64Builder::new()),
            Kind::Figure => figures.push(Float64Builder::new()),
        }
    }
    for (a, r) in report.analyses.iter().zip(&rows) {
        let rank = report.kernels[a.index]
            .tags
            .get("rank")
            .and_then(|v| v.parse::<i64>().ok());
        let (mut t, mut c, mut f) = (0, 0, 0);
        for v in values(table, run, bundle, r, rank) {
            match v {
                Value::Text(v) => {
                    text[t].append_option(v);
                    t += 1;
                }
                Value::Count(v) => {
                    counts[c].append_option(v);
                    c += 1;
                }
                Value::Figure(v) => {
                    figures[f].append_option(v);
                    f += 1;
                }
            }
        }
    }
    let (mut t, mut c, mut f) = (0, 0, 0);
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(COLUMNS.len());
    for (_, kind) in COLUMNS {
        match kind {
            Kind::Text => {
                columns.push(Arc::new(text[t].finish()));
                t += 1;
            }
            Kind::Count => {
                columns.push(Arc::new(counts[c].finish()));
                c += 1;
            }
            Kind::Figure => {
                columns.push(Arc::new(figures[f].finish()));
                f += 1;
            }
        }
    }
    let name = table.name();
    let batch = RecordBatch::try_new(Arc::new(schema()), columns).map_err(|source| {
        ParquetError::Arrow {
            table: name,
            source,
        }
    })?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(format!("roofline {}", env!("CARGO_PKG_VERSION")))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).map_err(|source| {
        ParquetError::Parquet {
            table: name,
            source,
        }
    })?;
    w.write(&batch).map_err(|source| ParquetError::Parquet {
        table: name,
        source,
    })?;
    w.close().map_err(|source| ParquetError::Parquet {
        table: name,
        source,
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use roofline_model::bundle::{DataSource, Kernel, Provenance};

    /// The file reads back with the schema and the CSV's figures.
    #[test]
    fn a_table_reads_back_typed() {
        let mut b = Bundle::new(Provenance::default());
        let mut k = Kernel::new("gemm", 2e-3, DataSource::Suite);
        k.flops.fp32 = Some(4e9);
        k.tags.insert("rank".into(), "3".into());
        b.kernels.push(k.clone());
        b.kernels.push(k);
        let run = Run {
            id: "abc".into(),
            name: "run-1".into(),
        };
        let bytes = to_parquet(Table::Kernels, &run, &b).unwrap();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
        let batch = &batches[0];
        assert_eq!(batch.num_rows(), 1);
        assert_eq!(batch.schema().as_ref(), &schema());
        let col = |n: &str| batch.column(batch.schema().index_of(n).unwrap()).clone();
        assert_eq!(col("run").as_string::<i32>().value(0), "run-1");
        assert_eq!(col("launches").as_primitive::<Int64Type>().value(0), 2);
        assert_eq!(col("rank").as_primitive::<Int64Type>().value(0), 3);
        assert_eq!(col("time_s").as_primitive::<Float64Type>().value(0), 4e-3);
        assert_eq!(col("flops").as_primitive::<Float64Type>().value(0), 8e9);
        // Unknown figures are nulls, not zeros.
        assert!(col("bytes_hbm").is_null(0));
        assert!(col("calls").is_null(0));
    }
}
