//! End-to-end tests across the roofline crates, on the fixtures in `tests/fixtures/`.

mod ncu_import;
mod readability;
mod robustness;
mod samples;
mod schema;
mod snapshots;
mod v100_reference;
