//! The kernel table: one row per kernel name, sortable and searchable; a click selects. The
//! bound columns name the binding ceiling (`HBM`, `Tensor FP16`). With a baseline it gains the
//! baseline's time, Δ, speed-up and what changed (`≈` for a pair by a similar name, `?` for a
//! doubtful counterpart left apart; the row's tooltip says more).

use std::sync::Arc;

use leptos::prelude::*;

use roofline_model::analysis::Analysed;
use roofline_model::analysis::compare::{CompareRow, Comparison, Presence};
use roofline_model::analysis::group::GroupBy;
use roofline_model::analysis::si::{format_plain, format_si};
use roofline_model::analysis::sort_indices;
use roofline_model::chart::svg::esc;

/// The table's sort column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SortBy {
    Name,
    Time,
    Launches,
    FlopPerS,
    AiHbm,
    Headroom,
    Gap,
}

fn cell(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".into(), |v| format_si(v, unit))
}

/// The kernel table: one row per kernel name; sortable, searchable; a click selects.
#[component]
pub fn KernelTable(
    /// The current run's analysis.
    analysed: Memo<Option<Arc<Analysed>>>,
    /// The selected kernel (full name).
    selected: RwSignal<Option<String>>,
    /// The name filter.
    filter: RwSignal<String>,
    /// The comparison with a baseline, when one is chosen: its rows follow `analysed.top`'s order,
    /// then the gone kernels.
    comparison: Memo<Option<Comparison>>,
    /// How the rows are grouped: the first column is headed by what a row is.
    group: Memo<GroupBy>,
) -> impl IntoView {
    let comparing = move || comparison.with(Option::is_some);
    let sort = RwSignal::new((SortBy::Time, true));
    let header = move |label: Signal<&'static str>, by: SortBy| {
        view! {
            <th
                class="sortable"
                class:name=by == SortBy::Name
                on:click=move |_| sort.update(|(b, desc)| {
                    if *b == by {
                        *desc = !*desc;
                    } else {
                        *b = by;
                        *desc = by != SortBy::Name;
                    }
                })
            >
                {label}
                {move || (sort.get().0 == by).then(|| if sort.get().1 { " ▼" } else { " ▲" })}
            </th>
        }
    };
    // How many rows are drawn: a table of 10,000 rows costs a second to build and nobody reads
    // it; the rest is a click (or a filter) away.
    let shown = RwSignal::new(TABLE_ROWS);
    // Everything below reads the analysis directly (it changes with the bundle and the ceilings):
    // a memo derived from it in between (a sorted order, say) left the table stale after a machine
    // swap, once leptos found that derived memo unchanged.
    let more = move || {
        let needle = filter.get().to_ascii_lowercase();
        let total = analysed.with(|r| r.as_ref().map_or(0, |r| matching(r, &needle).count()));
        let limit = shown.get();
        (total > limit).then(|| {
            view! {
                <p class="more" id="table-more">
                    {format!("Showing {limit} of {total} kernels. ")}
                    <button id="show-more" on:click=move |_| shown.update(|n| *n += TABLE_ROWS)>
                        {format!("Show {} more", TABLE_ROWS.min(total - limit))}
                    </button>
                    " "
                    <button id="show-all" on:click=move |_| shown.set(usize::MAX)>"Show all"</button>
                </p>
            }
        })
    };
    view! {
        <section class="kernels">
            <input
                id="kernel-search"
                type="search"
                placeholder="Filter kernels by name"
                prop:value=move || filter.get()
                on:input=move |ev| filter.set(event_target_value(&ev))
            />
            <div class="table-scroll">
            <table id="kernel-table" role="table" class:comparing=comparing>
                <thead role="rowgroup">
                    <tr role="row">
                        {header(Signal::derive(move || group.get().heading()), SortBy::Name)}
                        <th>"Share"</th>
                        {header(Signal::stored("Time"), SortBy::Time)}
                        {header(Signal::stored("Launches"), SortBy::Launches)}
                        {header(Signal::stored("FLOP/s"), SortBy::FlopPerS)}
                        <th>"AI L1"</th>
                        <th>"AI L2"</th>
                        {header(Signal::stored("AI HBM"), SortBy::AiHbm)}
                        <th title="The ceiling that binds the kernel on the hierarchical roofline">"Bound"</th>
                        {header(Signal::stored("Headroom"), SortBy::Headroom)}
                        <th title="The term that binds the kernel on the time-based roofline">"Time bound"</th>
                        {header(Signal::stored("T/Tbound"), SortBy::Gap)}
                        {move || comparing().then(|| view! {
                            <th class="baseline">"Baseline"</th>
                            <th class="delta">"Δ time"</th>
                            <th class="speedup">"Speed-up"</th>
                            <th class="bound-change" title="What changed: the binding ceiling (before → after); ≈ paired by a similar name; ✋ paired by hand; ? a doubtful counterpart left apart">"Change"</th>
                        })}
                    </tr>
                </thead>
                <tbody role="rowgroup">
                    {move || {
                        let limit = shown.get();
                        let needle = filter.get().to_ascii_lowercase();
                        let (by, desc) = sort.get();
                        let sel = selected.get();
                        analysed.with(|r| {
                            let Some(r) = r else { return Vec::new() };
                            let order = table_order(r, &needle, by, desc);
                            let mut picked: Vec<usize> = order.iter().copied().take(limit).collect();
                            // The selected kernel (perhaps clicked on the chart) is always listed,
                            // after the others when it is beyond the rows drawn.
                            picked.extend(order.iter().skip(limit).copied().find(|&i| Some(&r.kernels[r.top[i].index].name) == sel.as_ref()));
                            let display = r.display_names();
                            picked
                                .into_iter()
                                .map(|i| {
                                        let a = &r.top[i];
                                        let k = &r.kernels[a.index];
                                        let name = k.name.clone();
                                        // The row is one piece of HTML (the first paint's budget has
                                        // no room for a view per cell); its comparison's cells follow
                                        // the comparison alone.
                                        let own = format!(
                                            r#"<td class="name">{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="bound">{}</td><td>{}</td><td class="region"{}>{}</td><td>{}</td>"#,
                                            esc(&display[a.index]),
                                            a.share_of_time * 100.0,
                                            format_si(a.time_s, "s"),
                                            k.launches,
                                            cell(a.flop_per_s, "FLOP/s"),
                                            a.ai[0].map_or("–".into(), format_plain),
                                            a.ai[1].map_or("–".into(), format_plain),
                                            a.ai[2].map_or("–".into(), format_plain),
                                            a.hierarchical.as_ref().map_or("–", |h| h.ceiling_label()),
                                            a.headroom.map_or("–".into(), |h| format!("{h:.2}")),
                                            a.time_bound.map(|t| format!(r#" title="{} region""#, t.region.key())).unwrap_or_default(),
                                            a.time_ceiling_label().unwrap_or("–"),
                                            a.gap.map_or("–".into(), |g| format!("{g:.2}")),
                                        );
                                        let cmp_name = name.clone();
                                        let cells = move || {
                                            let mut html = own.clone();
                                            comparison.with(|c| {
                                                if let Some(row) = c.as_ref().and_then(|c| c.rows.get(i).filter(|row| row.name == cmp_name)) {
                                                    html.push_str(&compare_cells(row));
                                                }
                                            });
                                            html
                                        };
                                        let is_sel = {
                                            let name = name.clone();
                                            move || selected.get().as_deref() == Some(name.as_str())
                                        };
                                        let click_name = name.clone();
                                        view! {
                                            <tr
                                                role="row"
                                                class:selected=is_sel
                                                title=name
                                                on:click=move |_| {
                                                    let n = click_name.clone();
                                                    selected.update(|s| {
                                                        *s = if s.as_deref() == Some(n.as_str()) { None } else { Some(n) };
                                                    });
                                                }
                                                inner_html=cells
                                            ></tr>
                                        }
                                        .into_any()
                                    })
                                    .collect::<Vec<_>>()
                        })
                    }}
                    {move || {
                        // The gone kernels, after the current run's rows (a node of its own, so
                        // that a change of baseline leaves the rows above in place).
                        let limit = shown.get();
                        let needle = filter.get().to_ascii_lowercase();
                        let listed = analysed.with(|r| r.as_ref().map_or(0, |r| matching(r, &needle).count()));
                        gone_rows(comparison, &needle, limit.saturating_sub(listed))
                    }}
                </tbody>
            </table>
            </div>
            {more}
        </section>
    }
}

/// The comparison's cells of a row: baseline time, Δ, speed-up, what changed (the change of
/// binding ceiling, `new`, `gone`; marked for a pair by a similar name or by hand, and for a
/// doubtful counterpart left apart, which the cell's tooltip names).
fn compare_cells(row: &CompareRow) -> String {
    let speedup = row.speedup();
    let class = match speedup {
        Some(x) if x > 1.0 => "faster",
        Some(x) if x < 1.0 => "slower",
        _ => "",
    };
    let flag = match (row.doubt.is_some(), row.quality) {
        (true, _) => " doubtful",
        (_, Some(q)) => match q {
            roofline_model::analysis::compare::Match::Exact => "",
            roofline_model::analysis::compare::Match::Manual => " manual",
            _ => " similar",
        },
        _ => "",
    };
    format!(
        r#"<td class="baseline">{}</td><td class="delta {class}">{}</td><td class="speedup {class}">{}</td><td class="bound-change{flag}" title="{}">{}</td>"#,
        row.baseline
            .as_ref()
            .map_or("–".into(), |b| format_si(b.time_s, "s")),
        signed_si(row.delta_s()),
        speedup.map_or("–".into(), |x| format!("{x:.2}×")),
        esc(&row.transition()),
        esc(&row.change()),
    )
}

/// A time difference with its sign.
fn signed_si(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", format_si(v, "s"))
    } else if v < 0.0 {
        format!("−{}", format_si(-v, "s"))
    } else {
        "0 s".into()
    }
}

/// The kernels gone since the baseline (matching the filter), after the current run's rows, at
/// most `limit` (what is left of the rows drawn once the current run's are listed: "Show all"
/// lists them all; the summary line counts them).
fn gone_rows(comparison: Memo<Option<Comparison>>, needle: &str, limit: usize) -> Vec<AnyView> {
    comparison.with(|c| {
        let Some(c) = c else { return Vec::new() };
        c.rows
            .iter()
            .filter(|r| r.presence == Presence::Gone)
            .filter(|r| needle.is_empty() || r.name.to_ascii_lowercase().contains(needle))
            .take(limit)
            .map(|r| {
                let b = r.baseline.as_ref();
                let cells = format!(
                    r#"<td class="name">{} (gone)</td>{}<td class="bound">{}</td>{}{}"#,
                    esc(&r.short_name()),
                    "<td>–</td>".repeat(7),
                    b.and_then(|b| b.ceiling()).unwrap_or("–"),
                    "<td>–</td>".repeat(3),
                    compare_cells(r),
                );
                view! { <tr class="gone" role="row" title=r.name.clone() inner_html=cells></tr> }
                    .into_any()
            })
            .collect()
    })
}

/// Rows of the kernel table drawn at first, and added by "Show more": four screens of rows, in
/// any sort order over all the kernels. Every row drawn costs on each swap and comparison (its
/// cells are rewritten and laid out); at 200 rows a machine swap of 10,000 kernels was over its
/// 50 ms budget (`cargo xtask bench-viewer`).
const TABLE_ROWS: usize = 100;

/// Indices of the analyses (`r.top`) whose kernel name contains `needle` (ASCII lower case: the
/// filter ignores the case of ASCII letters, which kernel names are written in; Unicode case
/// tables cost the page several kilobytes of wasm).
fn matching<'a>(r: &'a Analysed, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    (0..r.top.len()).filter(move |&i| {
        needle.is_empty()
            || r.kernels[r.top[i].index]
                .name
                .to_ascii_lowercase()
                .contains(needle)
    })
}

/// The kernel table's rows in display order: indices into `r.top`.
fn table_order(r: &Analysed, needle: &str, by: SortBy, desc: bool) -> Vec<usize> {
    let mut order: Vec<usize> = matching(r, needle).collect();
    if by == SortBy::Time && desc {
        // `r.top` is in this order already (ties in the bundle's order, as `roofline info`).
        return order;
    }
    if by == SortBy::Name {
        let names = r.display_names();
        sort_indices(&mut order, &|a, b| {
            names[r.top[a].index].cmp(&names[r.top[b].index])
        });
    } else {
        let key = |i: usize| -> f64 {
            let a = &r.top[i];
            match by {
                SortBy::Name | SortBy::Time => a.time_s,
                SortBy::Launches => r.kernels[a.index].launches as f64,
                SortBy::FlopPerS => a.flop_per_s.unwrap_or(-1.0),
                SortBy::AiHbm => a.ai[2].unwrap_or(-1.0),
                SortBy::Headroom => a.headroom.unwrap_or(-1.0),
                SortBy::Gap => a.gap.unwrap_or(-1.0),
            }
        };
        sort_indices(&mut order, &|a, b| key(a).total_cmp(&key(b)));
    }
    if desc {
        order.reverse();
    }
    order
}
