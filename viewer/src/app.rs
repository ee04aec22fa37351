//! The application: opening bundles, the two roofline charts, the machine's ceilings, the kernel
//! table, what-if ceilings, URL state and exports.
//!
//! Every figure comes from `roofline_model`: one [`Analysed`] per bundle and ceilings feeds the
//! table and the charts' [`Scene`]s, and edits only change the [`Ceilings`] it is given; this
//! module wires them to the DOM.

use leptos::prelude::*;
use leptos::task::spawn_local;
use std::borrow::Cow;
use std::sync::Arc;

use roofline_model::aggregate::aggregate_by_name;
use roofline_model::bundle::{Bundle, Datapath, MemoryLevel, Method};
use roofline_model::ceilings::{Ceiling, Ceilings};
use roofline_model::chart::{self, Analysed, ChartOptions, Domain, Scene};
use roofline_model::geometry::si::{format_plain, format_plain_with_digits, format_si};
use wasm_bindgen::JsCast;

use crate::chart_view::ChartView;
use crate::export;
use crate::perf;
use crate::url_state::UrlState;

/// Sample bundles shipped with the viewer.
pub const SAMPLES: &[(&str, &str)] = &[(
    "v100-deepcam-example.json",
    include_str!("../../tests/fixtures/bundles/v100-deepcam-example.json"),
)];

/// A bundle opened in the viewer.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    /// File name, sample name or URL.
    pub name: String,
    /// The bundle, its kernels aggregated by name once on opening (`roofline profile` writes one
    /// entry per launch; aggregating again, as the report and charts do, changes nothing). Shared,
    /// so that the page's signals clone a pointer, not 100,000 kernels.
    pub bundle: Arc<Bundle>,
}

/// What the main area shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Performance against intensity.
    Hierarchical,
    /// FLOPs against bytes.
    Time,
    /// The ceilings table.
    Machine,
}

impl View {
    /// The URL name.
    pub fn key(self) -> &'static str {
        match self {
            View::Hierarchical => "hierarchical",
            View::Time => "time",
            View::Machine => "machine",
        }
    }

    /// From the URL name.
    pub fn from_key(s: &str) -> Option<Self> {
        match s {
            "hierarchical" => Some(View::Hierarchical),
            "time" => Some(View::Time),
            "machine" => Some(View::Machine),
            _ => None,
        }
    }
}

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

fn parse(name: &str, text: &str) -> Result<Loaded, String> {
    perf::mark("roofline:open:read");
    let parsed = roofline_model::parse_bundle(text);
    perf::mark("roofline:open:parsed");
    parsed
        .map(|mut bundle| {
            bundle.kernels =
                perf::span("roofline:aggregate", || aggregate_by_name(&bundle.kernels));
            Loaded {
                name: name.to_string(),
                bundle: Arc::new(bundle),
            }
        })
        .map_err(|e| format!("{name} is not a readable bundle: {e}"))
}

/// Bytes read from a file or a response, as a bundle (read as bytes: a JavaScript string of a
/// large file costs a decoding and an encoding more).
fn parse_bytes(name: &str, bytes: &[u8]) -> Result<Loaded, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        format!("{name} is not a readable bundle: it is not UTF-8 text (a bundle is JSON): {e}")
    })?;
    parse(name, text)
}

/// The bytes of a resolved `ArrayBuffer` promise.
async fn array_buffer(p: js_sys::Promise) -> Result<Vec<u8>, ()> {
    let buf = wasm_bindgen_futures::JsFuture::from(p)
        .await
        .map_err(|_| ())?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

async fn fetch_bundle(url: &str) -> Result<Loaded, String> {
    use wasm_bindgen_futures::JsFuture;
    perf::mark("roofline:open:start");
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url)).await.map_err(|_| {
        format!(
            "could not fetch {url}: the server did not answer, or it does not allow this page to read it (CORS: the server must send Access-Control-Allow-Origin)"
        )
    })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response".to_string())?;
    if !resp.ok() {
        return Err(format!(
            "could not fetch {url}: the server answered HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let body = resp
        .array_buffer()
        .map_err(|_| format!("could not read the body of {url}"))?;
    let bytes = array_buffer(body)
        .await
        .map_err(|()| format!("could not read the body of {url}"))?;
    parse_bytes(url, &bytes)
}

async fn read_file(file: web_sys::File) -> Result<Loaded, String> {
    let name = file.name();
    perf::mark("roofline:open:start");
    let bytes = array_buffer(file.array_buffer())
        .await
        .map_err(|()| format!("could not read {name}"))?;
    parse_bytes(&name, &bytes)
}

/// The ceilings of a bundle's first machine.
fn ceilings_of(b: &Bundle) -> Option<Ceilings> {
    b.machines.first().map(Ceilings::from_machine)
}

/// Hand edits of ceilings, applied over the chosen machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edits {
    /// Bandwidth overrides, byte/s.
    pub bandwidth: Vec<(MemoryLevel, f64)>,
    /// Compute overrides, FLOP/s.
    pub compute: Vec<(Datapath, f64)>,
    /// Launch overhead override, seconds.
    pub launch_s: Option<f64>,
}

impl Edits {
    fn apply(&self, mut c: Ceilings) -> Ceilings {
        for (l, v) in &self.bandwidth {
            c.set_bandwidth(
                *l,
                Some(Ceiling {
                    value: *v,
                    method: Method::Empirical,
                }),
            );
        }
        for (d, v) in &self.compute {
            c.set_peak(
                *d,
                Some(Ceiling {
                    value: *v,
                    method: Method::Empirical,
                }),
            );
        }
        if let Some(t) = self.launch_s {
            c.launch_overhead_s = Some(t);
        }
        c
    }

    fn is_empty(&self) -> bool {
        self.bandwidth.is_empty() && self.compute.is_empty() && self.launch_s.is_none()
    }
}

/// The whole page; `embed` gives the compact chrome for iframes.
#[component]
pub fn App(
    /// Compact chrome (chart only) for `embed.html`.
    embed: bool,
) -> impl IntoView {
    let initial = UrlState::from_location();
    let bundles: RwSignal<Vec<Loaded>> = RwSignal::new(if initial.bundle.is_some() {
        Vec::new()
    } else {
        SAMPLES
            .iter()
            .filter_map(|(n, t)| parse(&format!("sample: {n}"), t).ok())
            .collect()
    });
    let current = RwSignal::new(0usize);
    let machine_from = RwSignal::new(None::<usize>);
    let view_kind = RwSignal::new(initial.view);
    let selected = RwSignal::new(initial.kernel.clone());
    let isolate = RwSignal::new(false);
    let filter = RwSignal::new(initial.filter.clone());
    let top = RwSignal::new(initial.top.unwrap_or(if embed {
        12
    } else {
        ChartOptions::browser().top_kernels
    }));
    let levels = RwSignal::new(initial.levels.clone());
    let hidden_paths = RwSignal::new(Vec::<Datapath>::new());
    let edits = RwSignal::new(Edits::default());
    let domain = RwSignal::new(None::<Domain>);
    let error = RwSignal::new(None::<String>);
    let loading = RwSignal::new(false);
    let dark = RwSignal::new(initial.dark);
    let remote_url = RwSignal::new(initial.bundle.clone());

    let add = move |l: Loaded| {
        bundles.update(|b| b.push(l));
        current.set(bundles.with_untracked(Vec::len) - 1);
        domain.set(None);
        error.set(None);
    };

    if let Some(url) = initial.bundle {
        loading.set(true);
        spawn_local(async move {
            match fetch_bundle(&url).await {
                Ok(l) => add(l),
                Err(e) => error.set(Some(e)),
            }
            loading.set(false);
        });
    }

    let open_files = move |files: Option<web_sys::FileList>| {
        let Some(files) = files else { return };
        for i in 0..files.length() {
            if let Some(f) = files.get(i) {
                spawn_local(async move {
                    match read_file(f).await {
                        Ok(l) => {
                            remote_url.set(None);
                            add(l);
                        }
                        Err(e) => error.set(Some(e)),
                    }
                });
            }
        }
    };

    // Keep the URL in step with the view, so that a copied link reproduces it.
    Effect::new(move |_| {
        UrlState {
            bundle: remote_url.get(),
            view: view_kind.get(),
            kernel: selected.get(),
            filter: filter.get(),
            levels: levels.get(),
            top: Some(top.get()),
            dark: dark.get(),
        }
        .write_to_location();
    });

    // The ceilings in use: the bundle's own or another's (what-if), then hand edits.
    let ceilings = Memo::new(move |_| {
        let all = bundles.get();
        let own = all.get(current.get()).and_then(|l| ceilings_of(&l.bundle));
        let base = match machine_from.get() {
            Some(i) => all.get(i).and_then(|l| ceilings_of(&l.bundle)).or(own),
            None => own,
        };
        let e = edits.get();
        match base {
            Some(c) => Some(e.apply(c)),
            None if !e.is_empty() => Some(e.apply(Ceilings::default())),
            None => None,
        }
    });

    // One analysis of the current bundle's kernels against the ceilings in use, shared by the
    // chart and the table. Recomputed only when its inputs change, so it is always "changed":
    // comparing two analyses of 10,000 kernels field by field costs more than the table it feeds.
    let analysed = Memo::new_with_compare(
        move |_| {
            let all = bundles.get();
            let l = all.get(current.get())?;
            let c = ceilings.get();
            Some(perf::span("roofline:analysis", || {
                Analysed::new(&l.bundle, None, c.as_ref())
            }))
        },
        |_, _| true,
    );

    let scene = Memo::new(move |_| {
        // The analysis first (memos are lazy), so that the scene's measure is the scene's alone.
        analysed.with(|_| ());
        perf::span("roofline:scene", || -> Result<Scene, String> {
            let needle = filter.get().to_lowercase();
            let isolated = isolate.get().then(|| selected.get()).flatten();
            let hidden = hidden_paths.get();
            let datapaths = ceilings.get().map(|c| {
                c.datapaths()
                    .map(|(d, _)| d)
                    .filter(|d| !hidden.contains(d))
                    .collect()
            });
            let options = ChartOptions {
                top_kernels: top.get(),
                levels: levels.get(),
                datapaths,
                domain: domain.get(),
                ..ChartOptions::browser()
            };
            let kind = view_kind.get();
            analysed.with(|a| {
                let a = a.as_ref().ok_or(NO_BUNDLE)?;
                let shown = if let Some(sel) = isolated {
                    Cow::Owned(a.retain(|k| k.name == sel))
                } else if !needle.is_empty() {
                    Cow::Owned(a.retain(|k| k.name.to_lowercase().contains(&needle)))
                } else {
                    Cow::Borrowed(a)
                };
                match kind {
                    ChartKind::Hierarchical => chart::hierarchical_of(&shown, &options),
                    ChartKind::Time | ChartKind::Machine => chart::time_based_of(&shown, &options),
                }
                .map_err(|e| e.to_string())
            })
        })
    });

    let csv_name = move || {
        bundles.with(|b| {
            b.get(current.get())
                .map(|l| {
                    l.name
                        .rsplit('/')
                        .next()
                        .unwrap_or("bundle")
                        .trim_end_matches(".json")
                        .replace("sample: ", "")
                })
                .unwrap_or_else(|| "bundle".into())
        })
    };

    // With nothing open yet (or a bundle still loading) the chart area holds a hint, not an
    // error: only a failure gets the `.error` alert.
    let chart = move || {
        if bundles.with(Vec::is_empty) {
            return (!loading.get())
                .then(|| view! { <p class="empty-state">{NO_BUNDLE}</p> })
                .into_any();
        }
        match scene.get() {
            Ok(s) => view! { <ChartView scene=s selected=selected domain=domain /> }.into_any(),
            Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
        }
    };

    if embed {
        return view! {
            <div class="app embed" class:dark=move || dark.get()>
                <style>{STYLE}</style>
                {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
                {move || loading.get().then(|| view! { <p class="loading">"Loading…"</p> })}
                {chart}
            </div>
        }
        .into_any();
    }

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
                                domain.set(None);
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
                        id="file-input"
                        type="file"
                        accept=".json,application/json"
                        multiple=true
                        on:change=move |ev| {
                            let input: web_sys::HtmlInputElement = event_target(&ev);
                            open_files(input.files());
                        }
                    />
                </label>
                <span class="tabs" role="tablist">
                    {[View::Hierarchical, View::Time, View::Machine]
                        .into_iter()
                        .map(|v| {
                            let label = match v {
                                View::Hierarchical => "Hierarchical",
                                View::Time => "Time-based",
                                View::Machine => "Machine",
                            };
                            view! {
                                <button
                                    id=format!("tab-{}", v.key())
                                    role="tab"
                                    class:active=move || view_kind.get() == v
                                    on:click=move |_| {
                                        view_kind.set(v);
                                        domain.set(None);
                                    }
                                >
                                    {label}
                                </button>
                            }
                        })
                        .collect_view()}
                </span>
                <label>
                    "Ceilings from "
                    <select
                        id="machine-select"
                        on:change=move |ev| machine_from.set(event_target_value(&ev).parse::<usize>().ok())
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
                <button id="theme" on:click=move |_| dark.update(|d| *d = !*d)>"Light/dark"</button>
            </header>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            {move || loading.get().then(|| view! { <p class="loading">"Loading…"</p> })}
            <div class="toolbar">
                <span>"Levels: "</span>
                {MemoryLevel::KERNEL_LEVELS
                    .into_iter()
                    .map(|l| {
                        view! {
                            <label>
                                <input
                                    type="checkbox"
                                    id=format!("level-{}", l.key())
                                    prop:checked=move || levels.get().contains(&l)
                                    on:change=move |_| {
                                        levels.update(|ls| {
                                            if let Some(i) = ls.iter().position(|x| *x == l) {
                                                ls.remove(i);
                                            } else {
                                                ls.push(l);
                                            }
                                        });
                                    }
                                />
                                {l.label()}
                            </label>
                        }
                    })
                    .collect_view()}
                <span>" Roofs: "</span>
                {move || {
                    ceilings
                        .get()
                        .map(|c| {
                            c.datapaths()
                                .map(|(d, _)| {
                                    view! {
                                        <label>
                                            <input
                                                type="checkbox"
                                                id=format!("roof-{}", d.key())
                                                prop:checked=move || !hidden_paths.get().contains(&d)
                                                on:change=move |_| {
                                                    hidden_paths.update(|h| {
                                                        if let Some(i) = h.iter().position(|x| *x == d) {
                                                            h.remove(i);
                                                        } else {
                                                            h.push(d);
                                                        }
                                                    });
                                                }
                                            />
                                            {d.label()}
                                        </label>
                                    }
                                })
                                .collect_view()
                        })
                }}
                <label>
                    " Top "
                    <input
                        id="top"
                        type="number"
                        min="1"
                        max="500"
                        prop:value=move || top.get().to_string()
                        on:change=move |ev| {
                            if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                                top.set(n.clamp(1, 500));
                            }
                        }
                    />
                </label>
                <label>
                    <input type="checkbox" id="isolate" prop:checked=move || isolate.get() on:change=move |_| isolate.update(|i| *i = !*i) />
                    "Only the selected kernel"
                </label>
                <button id="reset-zoom" on:click=move |_| domain.set(None)>"Reset zoom"</button>
                <button id="export-svg" on:click=move |_| export::download_chart_svg(&format!("{}-{}.svg", csv_name(), view_kind.get_untracked().key()))>"SVG"</button>
                <button id="export-png" on:click=move |_| export::download_chart_png(&format!("{}-{}.png", csv_name(), view_kind.get_untracked().key()))>"PNG"</button>
                <button
                    id="export-csv"
                    on:click=move |_| {
                        let all = bundles.get_untracked();
                        let report = analysed.with_untracked(|a| a.as_ref().map(Analysed::report));
                        if let (Some(l), Some(r)) = (all.get(current.get_untracked()), report) {
                            export::download_text(&format!("{}-kernels.csv", csv_name()), "text/csv", &r.to_csv(&l.bundle));
                        }
                    }
                >
                    "CSV"
                </button>
            </div>
            {move || {
                if view_kind.get() == View::Machine {
                    let sweep = bundles.with(|all| {
                        all.get(current.get()).map(|l| {
                            chart::sweep(&l.bundle, &ChartOptions { domain: domain.get(), ..ChartOptions::browser() })
                        })
                    });
                    view! {
                        <MachineView ceilings=ceilings bundles=bundles current=current edits=edits />
                        {match sweep {
                            Some(Ok(s)) => view! { <ChartView scene=s selected=selected domain=domain /> }.into_any(),
                            _ => view! { <p class="hint" id="no-sweep">"No ERT-style sweep in this bundle: `roofline machine` records one."</p> }.into_any(),
                        }}
                    }
                    .into_any()
                } else {
                    chart().into_any()
                }
            }}
            <KernelTable analysed=analysed selected=selected filter=filter />
            <footer>
                "Drop bundle files anywhere on the page. Scroll on the chart to zoom, drag to pan. "
                "All figures are computed in your browser; bundles never leave it."
            </footer>
        </div>
    }
    .into_any()
}

/// Alias so the scene selector reads naturally.
type ChartKind = View;

/// A ceiling's implementation as the machine table shows it, marking same-run references.
fn implementation_label(implementation: Option<&str>, reference: bool) -> String {
    let text = implementation.unwrap_or_default();
    if reference {
        format!("{text} (reference)")
    } else {
        text.to_owned()
    }
}

/// The machine's ceilings: every entry of the bundle with its method, the one in use, the ratio
/// of empirical to theoretical, and a what-if field.
#[component]
fn MachineView(
    ceilings: Memo<Option<Ceilings>>,
    bundles: RwSignal<Vec<Loaded>>,
    current: RwSignal<usize>,
    edits: RwSignal<Edits>,
) -> impl IntoView {
    let rows = move || {
        let all = bundles.get();
        let Some(l) = all.get(current.get()) else {
            return Vec::new();
        };
        let Some(m) = l.bundle.machines.first() else {
            return Vec::new();
        };
        let mut rows = Vec::new();
        for level in MemoryLevel::ALL {
            let entries: Vec<_> = m.bandwidth.iter().filter(|b| b.level == level).collect();
            if entries.is_empty() {
                continue;
            }
            let theo = entries
                .iter()
                .filter(|e| e.method == Method::Theoretical)
                .map(|e| e.value)
                .reduce(f64::max);
            for e in entries {
                rows.push((
                    level.label().to_string(),
                    format_si(e.value, "B/s"),
                    e.method,
                    implementation_label(e.implementation.as_deref(), e.reference),
                    theo.filter(|_| e.method == Method::Empirical)
                        .map(|t| e.value / t),
                ));
            }
        }
        for d in Datapath::ALL {
            let entries: Vec<_> = m.compute.iter().filter(|c| c.datapath == d).collect();
            if entries.is_empty() {
                continue;
            }
            let theo = entries
                .iter()
                .filter(|e| e.method == Method::Theoretical)
                .map(|e| e.value)
                .reduce(f64::max);
            for e in entries {
                rows.push((
                    d.label().to_string(),
                    format_si(e.value, "FLOP/s"),
                    e.method,
                    implementation_label(e.implementation.as_deref(), e.reference),
                    theo.filter(|_| e.method == Method::Empirical)
                        .map(|t| e.value / t),
                ));
            }
        }
        if let Some(lo) = &m.launch_overhead {
            rows.push((
                "Launch overhead".into(),
                format_si(lo.value_s, "s"),
                lo.method,
                lo.implementation.clone().unwrap_or_default(),
                None,
            ));
        }
        rows
    };
    view! {
        <section class="machine">
            <h2>"Ceilings in the bundle"</h2>
            <table id="ceilings">
                <thead>
                    <tr><th class="name">"Ceiling"</th><th>"Value"</th><th>"Method"</th><th class="name">"Implementation"</th><th>"Empirical / theoretical"</th></tr>
                </thead>
                <tbody>
                    {move || {
                        rows()
                            .into_iter()
                            .map(|(name, value, method, imp, ratio)| {
                                view! {
                                    <tr>
                                        <td class="name">{name}</td>
                                        <td>{value}</td>
                                        <td>{match method { Method::Empirical => "empirical", Method::Theoretical => "theoretical" }}</td>
                                        <td class="name">{imp}</td>
                                        <td>{ratio.map_or("–".into(), |r| format!("{r:.3}"))}</td>
                                    </tr>
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
            <h2>"What if: ceilings in use"</h2>
            <p class="hint">"Type a value (in the unit shown) to see both rooflines and the table recomputed against it."</p>
            <table id="what-if">
                <tbody>
                    {move || {
                        let c = ceilings.get().unwrap_or_default();
                        let bw = c.levels().map(|(l, v)| {
                            let id = format!("edit-{}", l.key());
                            view! {
                                <tr>
                                    <td class="name">{l.label()}</td>
                                    <td>
                                        <input
                                            id=id
                                            type="number"
                                            step="any"
                                            value=format_plain_with_digits(v.value / 1e9, 6)
                                            on:change=move |ev| {
                                                if let Ok(x) = event_target_value(&ev).parse::<f64>() && x > 0.0 {
                                                    edits.update(|e| {
                                                        e.bandwidth.retain(|(k, _)| *k != l);
                                                        e.bandwidth.push((l, x * 1e9));
                                                    });
                                                }
                                            }
                                        />
                                        " GB/s"
                                    </td>
                                </tr>
                            }
                        });
                        let cp = c.datapaths().map(|(d, v)| {
                            let id = format!("edit-{}", d.key());
                            view! {
                                <tr>
                                    <td class="name">{d.label()}</td>
                                    <td>
                                        <input
                                            id=id
                                            type="number"
                                            step="any"
                                            value=format_plain_with_digits(v.value / 1e12, 6)
                                            on:change=move |ev| {
                                                if let Ok(x) = event_target_value(&ev).parse::<f64>() && x > 0.0 {
                                                    edits.update(|e| {
                                                        e.compute.retain(|(k, _)| *k != d);
                                                        e.compute.push((d, x * 1e12));
                                                    });
                                                }
                                            }
                                        />
                                        " TFLOP/s"
                                    </td>
                                </tr>
                            }
                        });
                        let launch = view! {
                            <tr>
                                <td class="name">"Launch overhead"</td>
                                <td>
                                    <input
                                        id="edit-launch"
                                        type="number"
                                        step="any"
                                        value=c.launch_overhead_s.map(|t| format_plain_with_digits(t * 1e6, 6)).unwrap_or_default()
                                        on:change=move |ev| {
                                            if let Ok(x) = event_target_value(&ev).parse::<f64>() && x > 0.0 {
                                                edits.update(|e| e.launch_s = Some(x * 1e-6));
                                            }
                                        }
                                    />
                                    " µs"
                                </td>
                            </tr>
                        };
                        (bw.collect_view(), cp.collect_view(), launch)
                    }}
                </tbody>
            </table>
            <button id="reset-edits" on:click=move |_| edits.set(Edits::default())>"Undo edits"</button>
        </section>
    }
}

fn cell(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "–".into(), |v| format_si(v, unit))
}

/// The kernel table: one row per kernel name; sortable, searchable; a click selects.
#[component]
fn KernelTable(
    analysed: Memo<Option<Analysed>>,
    selected: RwSignal<Option<String>>,
    filter: RwSignal<String>,
) -> impl IntoView {
    let sort = RwSignal::new((SortBy::Time, true));
    let header = move |label: &'static str, by: SortBy| {
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
        let needle = filter.get().to_lowercase();
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
            <table id="kernel-table">
                <thead>
                    <tr>
                        {header("Kernel", SortBy::Name)}
                        <th>"Share"</th>
                        {header("Time", SortBy::Time)}
                        {header("Launches", SortBy::Launches)}
                        {header("FLOP/s", SortBy::FlopPerS)}
                        <th>"AI L1"</th>
                        <th>"AI L2"</th>
                        {header("AI HBM", SortBy::AiHbm)}
                        <th>"Bound"</th>
                        {header("Headroom", SortBy::Headroom)}
                        <th>"Region"</th>
                        {header("T/Tbound", SortBy::Gap)}
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        let limit = shown.get();
                        let needle = filter.get().to_lowercase();
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
                                                <td class="name">{display[a.index].clone()}</td>
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
                                    .collect::<Vec<_>>()
                        })
                    }}
                </tbody>
            </table>
            {more}
        </section>
    }
}

/// Rows of the kernel table drawn at first, and added by "Show more".
const TABLE_ROWS: usize = 200;

/// Indices of the analyses (`r.top`) whose kernel name contains `needle` (lower case).
fn matching<'a>(r: &'a Analysed, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    (0..r.top.len()).filter(move |&i| {
        needle.is_empty()
            || r.kernels[r.top[i].index]
                .name
                .to_lowercase()
                .contains(needle)
    })
}

/// The kernel table's rows in display order: indices into `r.top`.
fn table_order(r: &Analysed, needle: &str, by: SortBy, desc: bool) -> Vec<usize> {
    let mut order: Vec<usize> = matching(r, needle).collect();
    if by == SortBy::Name {
        let names = r.display_names();
        order.sort_by(|&a, &b| names[r.top[a].index].cmp(&names[r.top[b].index]));
    } else {
        let key = |i: usize| -> f64 {
            let a = &r.top[i];
            match by {
                SortBy::Name | SortBy::Time => a.time_s,
                SortBy::Launches => {
                    #[allow(clippy::cast_precision_loss)]
                    let n = r.kernels[a.index].launches as f64;
                    n
                }
                SortBy::FlopPerS => a.flop_per_s.unwrap_or(-1.0),
                SortBy::AiHbm => a.ai[2].unwrap_or(-1.0),
                SortBy::Headroom => a.headroom.unwrap_or(-1.0),
                SortBy::Gap => a.gap.unwrap_or(-1.0),
            }
        };
        order.sort_by(|&a, &b| key(a).total_cmp(&key(b)));
    }
    if desc {
        order.reverse();
    }
    order
}

/// What the chart area says before any bundle is open.
const NO_BUNDLE: &str = "open a bundle: a file, a sample, or ?bundle=URL";

const STYLE: &str = r#"
body { margin: 0; }
.app { font-family: system-ui, sans-serif; color: #111; background: #fff; min-height: 100vh; padding: 8px 16px; box-sizing: border-box; }
.app.dark { color: #e8e8e8; background: #16181c; }
.app.embed { padding: 0; min-height: 0; }
header, .toolbar { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin-bottom: 6px; }
header h1 { font-size: 20px; margin: 0 12px 0 0; }
.toolbar { font-size: 13px; }
.tabs button.active { font-weight: bold; text-decoration: underline; }
.error { color: #b00020; background: #fdecea; padding: 8px; border-radius: 4px; }
.empty-state { color: #666; padding: 24px; text-align: center; }
.more { font-size: 12px; color: #666; }
.chart { position: relative; max-width: 1000px; }
.chart svg { width: 100%; height: auto; display: block; user-select: none; }
.dark .chart svg .bg { fill: #1e2126; }
.dark .chart svg text { fill: #ddd; }
.dark .chart svg .ceiling-label { stroke: #1e2126; }
.tooltip { position: absolute; pointer-events: none; background: rgba(20,20,20,0.92); color: #fff; padding: 6px 8px; border-radius: 4px; font-size: 12px; max-width: 420px; overflow-wrap: anywhere; }
.legend, .notes { list-style: none; padding: 0; margin: 4px 0; font-size: 12px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.notes { color: #666; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
table { border-collapse: collapse; font-size: 12px; margin-top: 8px; }
th, td { padding: 3px 8px; text-align: right; border-bottom: 1px solid #ddd; }
th.name, td.name { text-align: left; max-width: 360px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th.sortable { cursor: pointer; }
.kernels tbody tr { cursor: pointer; }
.kernels tr.selected { background: #ffe9a8; color: #111; }
.machine input { width: 9em; }
footer { margin-top: 12px; font-size: 12px; color: #777; }
"#;
