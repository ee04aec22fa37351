//! End-to-end tests across the roofline crates, on the fixtures in `tests/fixtures/`.

mod v100_reference;
