//! Exporters: each turns a bundle or a chart into bytes; [`crate::io`] writes them.

pub mod catalogue;
pub mod compare;
pub mod html;
pub mod info;
pub mod machine;
pub mod parquet;
pub mod svg;

pub use machine::summary as machine_summary;
