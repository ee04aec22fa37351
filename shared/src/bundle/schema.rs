//! The bundle's JSON Schema, generated from the Rust types with schemars.
//!
//! The committed copy, `schema/bundle-v1.schema.json`, is checked against this by a test, so the
//! file can never drift from what the code reads.

use crate::bundle::Bundle;

/// The JSON Schema (draft 2020-12) of bundle format v1, as pretty-printed JSON with a final
/// newline.
pub fn bundle_schema_json() -> String {
    let mut schema = schemars::schema_for!(Bundle);
    schema.insert(
        "description".into(),
        serde_json::Value::String(
            "A roofline bundle, format v1: devices, their measured ceilings and profiled kernels. \
             Units are SI base units throughout: FLOP (integer operations for int8), byte, \
             second, hertz; every rate is per second (FLOP/s, byte/s), never scaled by 10^9 or \
             2^30."
                .into(),
        ),
    );
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
