//! The application: opening bundles, the two roofline charts, the kernel table, what-if ceilings.
//!
//! Every figure comes from `roofline_model`: the charts draw its [`Scene`]s and the table shows
//! its [`KernelAnalysis`]es; this module only wires them to the DOM.

use leptos::prelude::*;
use leptos::task::spawn_local;
use roofline_model::aggregate::aggregate_by_name;
use roofline_model::analysis::{KernelAnalysis, analyze_with};
use roofline_model::bundle::{Bundle, Kernel};
use roofline_model::ceilings::Ceilings;
use roofline_model::chart::{self, ChartOptions, Scene};
use roofline_model::geometry::si::{format_plain, format_si};
use wasm_bindgen::JsCast;

use crate::chart_view::ChartView;

/// Sample bundles shipped with the viewer.
const SAMPLES: &[(&str, &str)] = &[(
    "v100-deepcam-example.json",
    include_str!("../../tests/fixtures/bundles/v100-deepcam-example.json"),
)];

/// A bundle opened in the viewer.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// File name or URL.
    pub name: String,
    /// The bundle.
    pub bundle: Bundle,
}

/// Which chart is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// Performance against intensity.
    Hierarchical,
    /// FLOPs against bytes.
    Time,
}

/// The table rows: kernels aggregated by name with their analyses, sorted by time.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Aggregated kernels.
    pub kernels: Vec<Kernel>,
    /// Analyses, largest time first.
    pub analyses: Vec<KernelAnalysis>,
}

/// The ceilings of the first device with a machine in a bundle.
fn ceilings_of(b: &Bundle) -> Option<Ceilings> {
    b.machines.first().map(Ceilings::from_machine)
}

fn parse(name: &str, text: &str) -> Result<Loaded, String> {
    roofline_model::parse_bundle(text)
        .map(|bundle| Loaded {
            name: name.to_string(),
            bundle,
        })
        .map_err(|e| format!("{name} is not a readable bundle: {e}"))
}

async fn fetch_text(url: &str) -> Result<String, String> {
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url)).await.map_err(|_| {
        format!(
            "could not fetch {url}: the server did not answer, or it does not allow this page to read it (CORS)"
        )
    })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response".to_string())?;
    if !resp.ok() {
        return Err(format!(
            "could not fetch {url}: HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let text = JsFuture::from(resp.text().map_err(|_| "no body".to_string())?)
        .await
        .map_err(|_| format!("could not read the body of {url}"))?;
    text.as_string().ok_or_else(|| format!("{url} is not text"))
}

async fn read_file(file: web_sys::File) -> Result<Loaded, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|_| format!("could not read {name}"))?;
    let text = text
        .as_string()
        .ok_or_else(|| format!("{name} is not text"))?;
    parse(&name, &text)
}

fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let bundles: RwSignal<Vec<Loaded>> = RwSignal::new(
        SAMPLES
            .iter()
            .filter_map(|(n, t)| parse(&format!("sample: {n}"), t).ok())
            .collect(),
    );
    let current = RwSignal::new(0usize);
    let machine_from = RwSignal::new(None::<usize>);
    let chart_kind = RwSignal::new(if query_param("chart").as_deref() == Some("time") {
        ChartKind::Time
    } else {
        ChartKind::Hierarchical
    });
    let selected = RwSignal::new(query_param("kernel"));
    let error = RwSignal::new(None::<String>);
    let dark = RwSignal::new(false);

    let add = move |l: Loaded| {
        bundles.update(|b| b.push(l));
        current.set(bundles.with_untracked(Vec::len) - 1);
        error.set(None);
    };

    if let Some(url) = query_param("bundle") {
        spawn_local(async move {
            match fetch_text(&url).await.and_then(|t| parse(&url, &t)) {
                Ok(l) => add(l),
                Err(e) => error.set(Some(e)),
            }
        });
    }

    let open_files = move |files: Option<web_sys::FileList>| {
        let Some(files) = files else { return };
        for i in 0..files.length() {
            if let Some(f) = files.get(i) {
                spawn_local(async move {
                    match read_file(f).await {
                        Ok(l) => add(l),
                        Err(e) => error.set(Some(e)),
                    }
                });
            }
        }
    };

    // The ceilings in use: the bundle's own, or another open bundle's (what-if).
    let ceilings = Memo::new(move |_| {
        let all = bundles.get();
        let own = all.get(current.get()).and_then(|l| ceilings_of(&l.bundle));
        match machine_from.get() {
            Some(i) => all.get(i).and_then(|l| ceilings_of(&l.bundle)).or(own),
            None => own,
        }
    });

    let table = Memo::new(move |_| {
        let all = bundles.get();
        let l = all.get(current.get())?;
        let kernels = aggregate_by_name(&l.bundle.kernels);
        let c = ceilings.get();
        let mut analyses = analyze_with(&kernels, |_| c.clone());
        analyses.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        Some(Table { kernels, analyses })
    });

    let scene = Memo::new(move |_| -> Result<Scene, String> {
        let all = bundles.get();
        let l = all.get(current.get()).ok_or("open a bundle")?;
        let options = ChartOptions {
            width: 900.0,
            height: 560.0,
            side_panel: 0.0,
            top_kernels: 40,
            ceilings: ceilings.get(),
            ..ChartOptions::default()
        };
        match chart_kind.get() {
            ChartKind::Hierarchical => chart::hierarchical(&l.bundle, &options),
            ChartKind::Time => chart::time_based(&l.bundle, &options),
        }
        .map_err(|e| e.to_string())
    });

    view! {
        <div
            class="app"
            class:dark=move || dark.get()
            on:dragover=|ev: web_sys::DragEvent| ev.prevent_default()
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                open_files(ev.data_transfer().and_then(|d| d.files()));
            }
        >
            <style>{STYLE}</style>
            <header>
                <h1>"roofline"</h1>
                <label>
                    "Bundle "
                    <select
                        id="bundle-select"
                        on:change=move |ev| {
                            if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                                current.set(i);
                                selected.set(None);
                            }
                        }
                    >
                        {move || {
                            bundles
                                .get()
                                .into_iter()
                                .enumerate()
                                .map(|(i, l)| {
                                    view! {
                                        <option value=i.to_string() selected=move || current.get() == i>
                                            {l.name}
                                        </option>
                                    }
                                })
                                .collect_view()
                        }}
                    </select>
                </label>
                <label class="file">
                    "Open… "
                    <input
                        type="file"
                        accept=".json,application/json"
                        multiple=true
                        on:change=move |ev| {
                            let input: web_sys::HtmlInputElement = event_target(&ev);
                            open_files(input.files());
                        }
                    />
                </label>
                <span class="tabs">
                    <button
                        id="tab-hierarchical"
                        class:active=move || chart_kind.get() == ChartKind::Hierarchical
                        on:click=move |_| chart_kind.set(ChartKind::Hierarchical)
                    >
                        "Hierarchical"
                    </button>
                    <button
                        id="tab-time"
                        class:active=move || chart_kind.get() == ChartKind::Time
                        on:click=move |_| chart_kind.set(ChartKind::Time)
                    >
                        "Time-based"
                    </button>
                </span>
                <label>
                    "Ceilings from "
                    <select
                        id="machine-select"
                        on:change=move |ev| {
                            machine_from.set(event_target_value(&ev).parse::<usize>().ok());
                        }
                    >
                        <option value="own">"this bundle"</option>
                        {move || {
                            bundles
                                .get()
                                .into_iter()
                                .enumerate()
                                .filter(|(_, l)| !l.bundle.machines.is_empty())
                                .map(|(i, l)| view! { <option value=i.to_string()>{l.name}</option> })
                                .collect_view()
                        }}
                    </select>
                </label>
                <button on:click=move |_| dark.update(|d| *d = !*d)>"Light/dark"</button>
            </header>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {move || match scene.get() {
                Ok(s) => view! { <ChartView scene=s selected=selected /> }.into_any(),
                Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
            }}
            <KernelTable table=table selected=selected />
        </div>
    }
}

fn cell(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".into(), |v| format_si(v, unit))
}

/// The kernel table: one row per kernel name, largest time first; a click selects.
#[component]
fn KernelTable(table: Memo<Option<Table>>, selected: RwSignal<Option<String>>) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    view! {
        <section class="kernels">
            <input
                id="kernel-search"
                type="search"
                placeholder="Filter kernels"
                on:input=move |ev| filter.set(event_target_value(&ev))
            />
            <table>
                <thead>
                    <tr>
                        <th>"Kernel"</th>
                        <th>"Share"</th>
                        <th>"Time"</th>
                        <th>"Launches"</th>
                        <th>"FLOP/s"</th>
                        <th>"AI L1"</th>
                        <th>"AI L2"</th>
                        <th>"AI HBM"</th>
                        <th>"Bound"</th>
                        <th>"Headroom"</th>
                        <th>"Region"</th>
                        <th>"T/Tbound"</th>
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        let needle = filter.get().to_lowercase();
                        table
                            .get()
                            .map(|t| {
                                t.analyses
                                    .iter()
                                    .filter(|a| {
                                        needle.is_empty()
                                            || t.kernels[a.index].name.to_lowercase().contains(&needle)
                                    })
                                    .map(|a| {
                                        let k = &t.kernels[a.index];
                                        let name = k.name.clone();
                                        let short = k.short_name();
                                        let is_sel = {
                                            let name = name.clone();
                                            move || selected.get().as_deref() == Some(name.as_str())
                                        };
                                        let click_name = name.clone();
                                        view! {
                                            <tr
                                                class:selected=is_sel
                                                title=name
                                                on:click=move |_| {
                                                    let n = click_name.clone();
                                                    selected.update(|s| {
                                                        *s = if s.as_deref() == Some(n.as_str()) { None } else { Some(n) };
                                                    });
                                                }
                                            >
                                                <td class="name">{short}</td>
                                                <td>{format!("{:.1}%", a.share_of_time * 100.0)}</td>
                                                <td>{format_si(a.time_s, "s")}</td>
                                                <td>{k.launches}</td>
                                                <td>{cell(a.flop_per_s, "FLOP/s")}</td>
                                                <td>{a.ai[0].map_or("–".into(), format_plain)}</td>
                                                <td>{a.ai[1].map_or("–".into(), format_plain)}</td>
                                                <td>{a.ai[2].map_or("–".into(), format_plain)}</td>
                                                <td>{a.hierarchical.as_ref().map_or("–", |h| h.bound.key())}</td>
                                                <td>{a.headroom.map_or("–".into(), |h| format!("{h:.2}"))}</td>
                                                <td>{a.time_bound.map_or("–", |t| t.region.key())}</td>
                                                <td>{a.gap.map_or("–".into(), |g| format!("{g:.2}"))}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()
                            })
                    }}
                </tbody>
            </table>
        </section>
    }
}

const STYLE: &str = r#"
body { margin: 0; }
.app { font-family: system-ui, sans-serif; color: #111; background: #fff; min-height: 100vh; padding: 8px 16px; }
.app.dark { color: #e8e8e8; background: #16181c; }
header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; }
header h1 { font-size: 20px; margin: 0 12px 0 0; }
.tabs button.active { font-weight: bold; text-decoration: underline; }
.error { color: #b00020; background: #fdecea; padding: 8px; border-radius: 4px; }
.chart { position: relative; max-width: 1000px; }
.chart svg { width: 100%; height: auto; }
.dark .chart svg .bg { fill: #1e2126; }
.dark .chart svg text { fill: #ddd; }
.tooltip { position: absolute; pointer-events: none; background: rgba(20,20,20,0.92); color: #fff; padding: 6px 8px; border-radius: 4px; font-size: 12px; max-width: 420px; }
.kernels table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
.kernels th, .kernels td { padding: 3px 8px; text-align: right; border-bottom: 1px solid #ddd; }
.kernels td.name { text-align: left; max-width: 360px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.kernels tr { cursor: pointer; }
.kernels tr.selected { background: #ffe9a8; color: #111; }
"#;
