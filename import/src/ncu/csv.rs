//! Finding and splitting the CSV table in Nsight Compute's output.
//!
//! `ncu --csv` writes whatever the profiled program and the profiler print (`==PROF==` lines, the
//! program's log) before the table, and may print more `==PROF==` lines after it. The table
//! starts at the header line whose first field is `"ID"`; fields are RFC 4180 quoted strings.

/// A CSV table: its header and rows, each row as many fields as the header.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows, with the 1-based line number each started on.
    pub rows: Vec<(usize, Vec<String>)>,
    /// Lines before the header (the program's own output), for context.
    pub preamble_lines: usize,
    /// Lines after the header that were not table rows (profiler messages), skipped; the
    /// last line of a file cut short is not among them but in `cut_short`.
    pub skipped_lines: Vec<usize>,
    /// The line of a last row cut short: the file ends inside it (an unterminated quote, too few
    /// fields, or a quoted table whose last row ends without its closing quote and line break).
    /// That row is in neither `rows` nor `skipped_lines`.
    pub cut_short: Option<usize>,
    /// The header's 1-based line.
    pub header_line: usize,
    /// Lines that start as a launch row (a launch ID, then a comma) but are not one: too few or
    /// too many fields, or a broken quote. In neither `rows` nor `skipped_lines`.
    pub broken_rows: Vec<BrokenRow>,
}

/// A line that starts as a launch row but is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokenRow {
    /// Its 1-based line.
    pub line: usize,
    /// The fields it has on its own line, or `None` for a quote left open at its end.
    pub fields: Option<usize>,
    /// The fields the header has.
    pub expected: usize,
}

impl BrokenRow {
    /// What is wrong with it, after "a launch row that".
    pub fn what(&self) -> String {
        match self.fields {
            Some(n) => format!("has {n} fields where the header has {}", self.expected),
            None => "leaves a quote open (a broken quote)".into(),
        }
    }
}

/// Whether a line starts as a launch row: its first field a launch ID (digits, thousands
/// separators inside quotes), then a comma. The program's own output inside the table (ncu
/// interleaves it) does not.
fn looks_like_row(line: &str) -> bool {
    let id_ok = |id: &str, commas: bool| {
        id.bytes().next().is_some_and(|b| b.is_ascii_digit())
            && id
                .bytes()
                .all(|b| b.is_ascii_digit() || (commas && b == b','))
    };
    match line.strip_prefix('"') {
        Some(r) => r
            .find('"')
            .is_some_and(|e| id_ok(&r[..e], true) && r[e + 1..].starts_with(',')),
        None => line.find(',').is_some_and(|e| id_ok(&line[..e], false)),
    }
}

/// Splits one CSV record starting at `text`; returns its fields and the bytes consumed
/// (including the line break). Quoted fields may hold commas, doubled quotes and line breaks.
fn record(text: &str) -> Option<(Vec<String>, usize, usize)> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = text.char_indices().peekable();
    let mut in_quotes = false;
    let mut newlines = 0;
    while let Some((i, c)) = chars.next() {
        match (in_quotes, c) {
            (true, '"') => {
                if chars.peek().map(|(_, c)| *c) == Some('"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            }
            (true, c) => {
                if c == '\n' {
                    newlines += 1;
                }
                field.push(c);
            }
            (false, '"') => in_quotes = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                fields.push(field);
                return Some((fields, i + 1, newlines + 1));
            }
            (false, c) => field.push(c),
        }
    }
    if in_quotes {
        // An unterminated quote: not a CSV record.
        return None;
    }
    if fields.is_empty() && field.is_empty() {
        return None;
    }
    fields.push(field);
    Some((fields, text.len(), newlines + 1))
}

/// True for a header line of an Nsight Compute CSV table.
fn is_header(line: &str) -> bool {
    let l = line.trim_start_matches('\u{feff}');
    (l.starts_with("\"ID\",") || l.starts_with("ID,")) && l.contains("Kernel Name")
}

/// Finds the table in Nsight Compute output and splits it.
///
/// Lines after the header that start with `==` (profiler messages) or do not have the header's
/// number of fields are skipped and listed. `None` when there is no header line.
pub fn find_table(text: &str) -> Option<Table> {
    let mut offset = 0;
    let mut header_at = None;
    for (line_no, line) in (1..).zip(text.split_inclusive('\n')) {
        if is_header(line) {
            header_at = Some((offset, line_no));
            break;
        }
        offset += line.len();
    }
    let (start, header_line) = header_at?;
    let mut rest = &text[start..];
    let quoted = rest.starts_with('"') || rest.starts_with("\u{feff}\"");
    let (header, used, lines) = record(rest)?;
    let header: Vec<String> = header
        .into_iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_string())
        .collect();
    rest = &rest[used..];
    let mut line = header_line + lines;
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut broken: Vec<BrokenRow> = Vec::new();
    // The last line that was neither blank nor a profiler message, and whether it is whole: a
    // complete row, or a malformed line that ends with a line break.
    let mut last: Option<(usize, bool)> = None;
    while !rest.is_empty() {
        let this_line = line;
        let first_line_len = rest.find('\n').map_or(rest.len(), |i| i + 1);
        if rest.starts_with("==") || rest.trim().is_empty() {
            // Profiler messages and blank lines are not part of the table.
            rest = &rest[first_line_len..];
            line += 1;
            continue;
        }
        let parsed = record(rest).filter(|(fields, used, lines)| {
            // A quote left open can swallow the rows after it into one record of the right
            // width: a record over several lines that holds the start of a row is not one.
            fields.len() == header.len()
                && (*lines == 1 || !rest[first_line_len..*used].split('\n').any(looks_like_row))
        });
        match parsed {
            Some((fields, used, lines)) => {
                // In a quoted table, a last row without its line break must end with a quote.
                let unterminated = used == rest.len()
                    && !rest.ends_with('\n')
                    && quoted
                    && !rest.trim_end().ends_with('"');
                rows.push((this_line, fields));
                last = Some((this_line, !unterminated));
                rest = &rest[used..];
                line += lines;
            }
            None => {
                let own = &rest[..first_line_len];
                if looks_like_row(own) {
                    broken.push(BrokenRow {
                        line: this_line,
                        fields: record(own).map(|(f, _, _)| f.len()),
                        expected: header.len(),
                    });
                } else {
                    skipped.push(this_line);
                }
                // An unterminated quote runs to the end of the file: always cut short.
                let whole = record(rest).is_some() && text.ends_with('\n');
                last = Some((this_line, whole));
                rest = &rest[first_line_len..];
                line += 1;
            }
        }
    }
    // A file that ends inside its last row was cut short: that row is not data.
    let cut_short = match last {
        Some((l, false)) => {
            if skipped.last() == Some(&l) {
                skipped.pop();
            } else if broken.last().is_some_and(|b| b.line == l) {
                broken.pop();
            } else {
                rows.pop();
            }
            Some(l)
        }
        _ => None,
    };
    Some(Table {
        header,
        rows,
        preamble_lines: header_line - 1,
        skipped_lines: skipped,
        cut_short,
        header_line,
        broken_rows: broken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_table_after_program_output() {
        let text = "Apex flag is True\n==PROF== Connected to process 1\nID is not a header\n\
            \"ID\",\"Kernel Name\",\"Metric Value\"\n\
            \"0\",\"void f<1, 2>(int, float)\",\"1,024\"\n\
            ==PROF== Disconnected from process 1\n\
            \"1\",\"say \"\"hi\"\"\",\"7\"\n";
        let t = find_table(text).unwrap();
        assert_eq!(t.header, vec!["ID", "Kernel Name", "Metric Value"]);
        assert_eq!(t.preamble_lines, 3);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(
            t.rows[0],
            (
                5,
                vec![
                    "0".into(),
                    "void f<1, 2>(int, float)".into(),
                    "1,024".into()
                ]
            )
        );
        assert_eq!(t.rows[1].1[1], "say \"hi\"");
        assert!(t.skipped_lines.is_empty());
    }

    #[test]
    fn malformed_rows_are_skipped_and_listed() {
        let text = "\"ID\",\"Kernel Name\"\r\n\"0\",\"a\"\r\nnot,a,row,of,two\r\n\"1\",\"b\"\r\n\"2\",\"unterminated\n";
        let t = find_table(text).unwrap();
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.skipped_lines, vec![3]);
        assert_eq!(t.cut_short, Some(5), "the file ends inside its last row");
    }

    #[test]
    fn a_file_cut_short_is_told_from_a_complete_one() {
        let full = "\"ID\",\"Kernel Name\",\"Metric Value\"\n\"0\",\"a\",\"58240\"\n\"1\",\"b\",\"170726912\"\n";
        let t = find_table(full).unwrap();
        assert_eq!((t.rows.len(), t.cut_short), (2, None));
        // Without the final line break, but whole.
        let t = find_table(full.trim_end()).unwrap();
        assert_eq!((t.rows.len(), t.cut_short), (2, None));
        // Cut at every byte of the last row: never a row with a shortened value.
        let start = full[..full.len() - 1].rfind('\n').unwrap() + 1;
        for cut in start + 1..full.len() - 1 {
            let t = find_table(&full[..cut]).unwrap();
            assert_eq!(t.rows.len(), 1, "cut at {cut}: {:?}", &full[start..cut]);
            assert_eq!(t.cut_short, Some(3), "cut at {cut}");
        }
    }

    #[test]
    fn no_header_no_table() {
        assert!(find_table("").is_none());
        assert!(find_table("just a log\n\"x\",\"y\"\n").is_none());
    }
}
