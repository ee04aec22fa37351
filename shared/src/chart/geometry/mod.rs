//! Chart geometry for log-log roofline charts: pure maths, no I/O, no clocks, no threads, so it
//! builds for `wasm32-unknown-unknown` and is shared by the viewer and any static renderer.
//!
//! * [`scale`]: [`LogScale`], [`Rect`] and [`Viewport`] (data ↔ pixels, zoom, pan) and
//!   [`fit_log_domain`].
//! * [`ticks`]: log-axis [`Tick`]s and Heckbert nice linear ticks.
//! * [`clip`]: Liang–Barsky segment and polyline clipping.
//! * [`roofline`]: roofline ceilings and time-based roofline shapes in data coordinates, with
//!   clipping done in log10 space.
//!
//! Conventions: data values are SI base units (FLOP, byte, second and their rates); pixel `y`
//! grows downwards; every function is total (invalid input gives `None`, an empty result or
//! NaN, never a panic).

pub mod clip;
pub mod roofline;
pub mod scale;
pub mod ticks;

pub use clip::{clip_polyline, clip_segment};
pub use roofline::{
    bandwidth_diagonal, clip_polyline_loglog, compute_roof, iso_intensity_line, iso_time_corner,
    iso_time_curve, launch_box_outline, launch_overhead_box, machine_balance_line, nearest_point,
    ridge_point, roofline_polyline,
};
pub use scale::{LogScale, Rect, Viewport, fit_log_domain};
pub use ticks::{Tick, log_ticks, nice_linear_ticks};
