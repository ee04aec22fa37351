//! Helpers shared by the end-to-end tests: where the fixtures are.

use std::path::{Path, PathBuf};

pub mod repeat_trace;
pub mod samples;
pub mod synthetic;
pub mod synthetic_trace;
pub mod webdriver;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `tests/fixtures` folder of the workspace.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Reads a fixture file as text, panicking with the path when it is missing (tests only).
pub fn fixture_text(relative: &str) -> String {
    let path = fixtures().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The study's per-kernel table, relative to the fixtures folder.
pub const STUDY_TABLE: &str = "reference/nersc-v100-deepcam/expected-per-kernel.csv";
const TABLE: &str = STUDY_TABLE;

/// Splits RFC 4180 text into records of fields: fields are separated by commas, records by LF or
/// CRLF; a field in double quotes may hold commas, line breaks and `""` for one quote. A trailing
/// line break does not start an empty record. Panics on a quote inside an unquoted field or an
/// unterminated quoted field (tests only).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    // Whether the current record has begun (so that a final line break ends it cleanly).
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                assert!(
                    field.is_empty(),
                    "a quote inside an unquoted field: {field:?}"
                );
                started = true;
                loop {
                    match chars.next() {
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                            field.push('"');
                        }
                        Some('"') => break,
                        Some(ch) => field.push(ch),
                        None => panic!("unterminated quoted field: {field:?}"),
                    }
                }
                assert!(
                    matches!(chars.peek(), None | Some(',' | '\r' | '\n')),
                    "text after a closing quote in {field:?}"
                );
            }
            ',' => {
                started = true;
                record.push(std::mem::take(&mut field));
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                started = false;
            }
            ch => {
                started = true;
                field.push(ch);
            }
        }
    }
    if started {
        record.push(field);
        records.push(record);
    }
    records
}

/// The 2020 study's per-kernel table (`reference/nersc-v100-deepcam/expected-per-kernel.csv`),
/// by column name.
pub struct StudyTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows, one per kernel name.
    pub rows: Vec<Vec<String>>,
}

impl StudyTable {
    /// Loads and checks the table.
    pub fn load() -> Self {
        let mut records = parse_csv(&fixture_text(TABLE));
        assert!(!records.is_empty(), "{TABLE} is empty");
        let header = records.remove(0);
        for (i, r) in records.iter().enumerate() {
            assert_eq!(
                r.len(),
                header.len(),
                "{TABLE} row {} has {} fields",
                i + 2,
                r.len()
            );
        }
        StudyTable {
            header,
            rows: records,
        }
    }

    /// The index of a column.
    pub fn column(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{TABLE} has no column {name:?}"))
    }

    /// The one row whose `Kernel Name` is `name`.
    pub fn row(&self, name: &str) -> &[String] {
        let col = self.column("Kernel Name");
        let mut found = self.rows.iter().filter(|r| r[col] == name);
        let row = found
            .next()
            .unwrap_or_else(|| panic!("{TABLE} has no row for {name:?}"));
        assert!(
            found.next().is_none(),
            "{TABLE} has several rows for {name:?}"
        );
        row
    }

    /// A numeric cell.
    pub fn num(&self, row: &[String], column: &str) -> f64 {
        let text = &row[self.column(column)];
        text.parse()
            .unwrap_or_else(|e| panic!("{column} = {text:?} is not a number: {e}"))
    }
}
