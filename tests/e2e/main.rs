//! End-to-end tests across the roofline crates, on the fixtures in `tests/fixtures/`.

mod architecture;
mod collectives;
mod columns;
mod llm_trace;
mod ncu_import;
mod ncu_robustness;
mod operator_oracle;
mod pytorch_versions;
mod readability;
mod robustness;
mod samples;
mod schema;
mod snapshots;
mod tidy;
mod trace_import;
mod v100_reference;
