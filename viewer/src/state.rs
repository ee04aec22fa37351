//! The page's state in one struct, [`AppState`]: what the reader opened and chose (signals) and
//! what the model computes from it (memos: the ceilings in use, one [`Analysed`] of the current
//! bundle and one of the baseline, their [`Comparison`]), with the actions that open bundles.
//! `App` creates it once and provides it as leptos context; every screen reads it with
//! [`AppState::get`]. The chart's scene is derived from it by [`crate::chart_area::scene_memo`].
//!
//! Leptos memos that derive from other memos can miss a change (a diamond): the kernel table
//! reads the analysis directly, and the analysis and comparison memos always count as changed
//! (`Memo::new_with_compare(…, |_, _| true)`).

use leptos::prelude::*;
use leptos::task::spawn_local;
use std::sync::{Arc, Weak};
use wasm_bindgen::JsValue;

use roofline_model::analysis::Analysed;
use roofline_model::analysis::ceilings::Ceilings;
use roofline_model::analysis::compare::{CompareOptions, Comparison, ManualPair, compare_with};
use roofline_model::analysis::group::GroupBy;
use roofline_model::bundle::{Bundle, Datapath, MemoryLevel};
use roofline_model::chart::view::{ImportFlags, View, ViewState};
use roofline_model::chart::{ChartOptions, Domain};

use crate::loading::{ImportSource, Loaded, SampleEntry, fetch_bundle, fetch_samples};
use crate::machine_view::Edits;
use crate::perf;
use crate::url_state;

/// Analyses of open bundles against their own machines kept for baseline choices.
const OWN_ANALYSES_KEPT: usize = 4;

/// The viewer's state: signals for what the reader opened and chose, memos for what the model
/// computes from them. `Copy`: every field is a handle into leptos's reactive arena.
#[derive(Clone, Copy)]
pub struct AppState {
    /// Compact chrome (chart only) for `embed.html`.
    pub embed: bool,
    /// The open bundles, in the order opened.
    pub bundles: RwSignal<Vec<Loaded>>,
    /// The samples served beside the site (none in a saved page).
    pub samples: RwSignal<Vec<SampleEntry>>,
    /// The bundle shown, an index into `bundles`.
    pub current: RwSignal<usize>,
    /// The bundle compared with, an index into `bundles`.
    pub baseline: RwSignal<Option<usize>>,
    /// The device shown (`None`: the bundle's first).
    pub device: RwSignal<Option<String>>,
    /// Another open bundle whose machine supplies the ceilings (what-if swap).
    pub machine_from: RwSignal<Option<usize>>,
    /// `roofline import`'s options for the imports the page makes (`arch=`, `convention=`,
    /// `allow_partial=`, `allow_machine_mismatch=`; "Import options").
    pub import_flags: RwSignal<ImportFlags>,
    /// The page's `?trace=` URLs and `?machine=`, to import them again when an import option
    /// changes while nothing is shown (their import was refused).
    url_import: StoredValue<Option<(Vec<String>, Option<String>)>>,
    /// How many imports of URLs or made again were asked for: one answered after a newer one
    /// was asked for is dropped (its options or machine are no longer the page's). Files
    /// dropped or picked are not counted: each shows.
    imports_asked: StoredValue<u32>,
    /// The view: hierarchical, time-based or machine.
    pub view: RwSignal<View>,
    /// The grouping asked for (per kernel, operator or module); `None`: the default
    /// (`ViewState::group_for`).
    pub group_asked: RwSignal<Option<GroupBy>>,
    /// The grouping shown: the one asked for, else per operator when comparing two bundles
    /// that carry operators, else per kernel.
    pub group_by: Memo<GroupBy>,
    /// Kernels of the comparison paired (or kept apart) by hand.
    pub pairs: RwSignal<Vec<ManualPair>>,
    /// The width the chart has on the page, whole pixels (the page's, less its padding).
    pub width: RwSignal<usize>,
    /// The selected kernel (full name).
    pub selected: RwSignal<Option<String>>,
    /// Only the selected kernel is drawn.
    pub isolate: RwSignal<bool>,
    /// The kernel name filter.
    pub filter: RwSignal<String>,
    /// How many kernels are drawn.
    pub top: RwSignal<usize>,
    /// How many of the largest kernels are named on the chart.
    pub label_n: RwSignal<usize>,
    /// The memory levels drawn.
    pub levels: RwSignal<Vec<MemoryLevel>>,
    /// The datapaths whose roofs are hidden.
    pub hidden_paths: RwSignal<Vec<Datapath>>,
    /// Hand edits of the ceilings (what-if).
    pub edits: RwSignal<Edits>,
    /// The data ranges shown (zoom and pan); `None` fits the data.
    pub domain: RwSignal<Option<Domain>>,
    /// The last failure, shown in an alert.
    pub error: RwSignal<Option<String>>,
    /// A bundle is being fetched.
    pub loading: RwSignal<bool>,
    /// Dark theme.
    pub dark: RwSignal<bool>,
    /// The ceilings in use: the bundle's own or another's (what-if), then hand edits.
    pub ceilings: Memo<Option<Ceilings>>,
    /// The current bundle's kernels analysed against the ceilings in use, shared by the chart and
    /// the table.
    pub analysed: Memo<Option<Arc<Analysed>>>,
    /// The baseline's analysis, against its own ceilings (its first device).
    pub baseline_analysed: Memo<Option<Arc<Analysed>>>,
    /// The comparison table and summary, when a baseline is chosen.
    pub comparison: Memo<Option<Comparison>>,
}

/// The latest analyses of open bundles against their own machines (what a baseline is analysed
/// against), by bundle and grouping: choosing as baseline a bundle shown before takes its
/// analysis instead of computing it again. (Weak references: the memo's inputs hold the bundles.)
#[derive(Clone, Copy)]
struct OwnAnalyses(StoredValue<Vec<OwnAnalysis>>);

/// A bundle (weakly), a grouping, and the bundle's kernels so grouped analysed against its own
/// machine.
type OwnAnalysis = (Weak<Bundle>, GroupBy, Arc<Analysed>);

impl OwnAnalyses {
    /// Keeps `a` if it is `l`'s analysis against its own machine.
    fn keep(self, l: &Loaded, by: GroupBy, a: &Arc<Analysed>) {
        if !a.is_own_analysis_of(&l.bundle) {
            return;
        }
        self.0.update_value(|v| {
            v.retain(|(b, g, _)| !(is_bundle(b, l) && *g == by));
            v.push((Arc::downgrade(&l.bundle), by, Arc::clone(a)));
            if v.len() > OWN_ANALYSES_KEPT {
                v.remove(0);
            }
        });
    }

    /// The analysis kept of `l` grouped by `by`, if any.
    fn find(self, l: &Loaded, by: GroupBy) -> Option<Arc<Analysed>> {
        self.0.with_value(|v| {
            v.iter()
                .find(|(b, g, _)| is_bundle(b, l) && *g == by)
                .map(|(_, _, a)| Arc::clone(a))
        })
    }
}

impl AppState {
    /// The state a page opens with: `initial` as its URL (or saved page) names it.
    pub fn new(initial: &ViewState, embed: bool) -> Self {
        let bundles = RwSignal::new(Vec::new());
        let current = RwSignal::new(0usize);
        let baseline = RwSignal::new(None::<usize>);
        let device = RwSignal::new(initial.device.clone());
        let machine_from = RwSignal::new(None::<usize>);
        let group_asked = RwSignal::new(initial.group);
        let pairs = RwSignal::new(initial.pairs.clone());
        // Per operator by default when both runs of a comparison carry operators.
        let group_by = Memo::new(move |_| {
            let comparing_operators = bundles.with(|b: &Vec<Loaded>| {
                let tagged = |i: usize| b.get(i).is_some_and(|l| l.tagged.is_some());
                baseline
                    .get()
                    .is_some_and(|i| i != current.get() && tagged(i) && tagged(current.get()))
            });
            ViewState::group_for(group_asked.get(), comparing_operators)
        });
        let edits = RwSignal::new(Edits::default());
        let ceilings = ceilings_memo(bundles, current, device, machine_from, edits);
        let own = OwnAnalyses(StoredValue::new(Vec::new()));
        let analysed = analysed_memo(bundles, current, device, group_by, ceilings, own);
        let baseline_analysed = baseline_memo(bundles, current, baseline, group_by, own);
        let comparison = Memo::new_with_compare(
            move |_| {
                let manual = pairs.get();
                let by = group_by.get();
                baseline_analysed.with(|b| {
                    let b = b.as_ref()?;
                    analysed.with(|a| {
                        let a = a.as_ref()?;
                        // The launches behind each operator or module, as imported.
                        let launches = bundles.with(|all| {
                            let raw = |i: usize| all.get(i).and_then(|l| l.tagged.clone());
                            (by != GroupBy::Kernel)
                                .then(|| {
                                    raw(current.get_untracked())
                                        .zip(baseline.get_untracked().and_then(raw))
                                })
                                .flatten()
                        });
                        let o = CompareOptions {
                            manual: &manual,
                            launches: launches.as_ref().map(|(c, b)| (&c[..], &b[..])),
                        };
                        Some(perf::span("roofline:compare", || compare_with(a, b, &o)))
                    })
                })
            },
            |_, _| true,
        );
        AppState {
            embed,
            bundles,
            samples: RwSignal::new(Vec::new()),
            current,
            baseline,
            device,
            machine_from,
            import_flags: RwSignal::new(initial.import.clone()),
            url_import: StoredValue::new(None),
            imports_asked: StoredValue::new(0),
            view: RwSignal::new(initial.view),
            group_asked,
            group_by,
            pairs,
            width: RwSignal::new(page_width(embed)),
            selected: RwSignal::new(initial.kernel.clone()),
            isolate: RwSignal::new(false),
            filter: RwSignal::new(initial.filter.clone()),
            top: RwSignal::new(initial.top.unwrap_or(if embed {
                12
            } else {
                ChartOptions::browser().top_kernels
            })),
            label_n: RwSignal::new(initial.labels.unwrap_or(if embed { 6 } else { 8 })),
            levels: RwSignal::new(initial.levels.clone()),
            hidden_paths: RwSignal::new(Vec::new()),
            edits,
            domain: RwSignal::new(None),
            error: RwSignal::new(None),
            loading: RwSignal::new(true),
            dark: RwSignal::new(initial.dark),
            ceilings,
            analysed,
            baseline_analysed,
            comparison,
        }
    }

    /// The state `App` provides to every screen.
    ///
    /// # Panics
    /// Outside `App` (no state provided).
    pub fn get() -> Self {
        expect_context::<AppState>()
    }

    /// The index of `l` among the open bundles: the one already open from the same URL, or `l`
    /// added.
    fn open(self, l: Loaded) -> usize {
        let open = self
            .bundles
            .with_untracked(|b| b.iter().position(|x| x.url.is_some() && x.url == l.url));
        open.unwrap_or_else(|| {
            self.bundles.update(|b| b.push(l));
            self.bundles.with_untracked(Vec::len) - 1
        })
    }

    /// A bundle opened: it becomes the current one (or is switched to when already open).
    pub fn add(self, l: Loaded) {
        let i = self.open(l);
        self.current.set(i);
        if self.baseline.get_untracked() == Some(i) {
            self.baseline.set(None);
        }
        self.device.set(None);
        self.domain.set(None);
        self.error.set(None);
    }

    /// A bundle opened as the baseline, keeping the current one.
    pub fn add_baseline(self, l: Loaded) {
        let i = self.open(l);
        if i != self.current.get_untracked() {
            self.baseline.set(Some(i));
        }
        self.domain.set(None);
    }

    /// Opens what the page holds or asks for: a saved page's own bundles (the run shown, then the
    /// baseline), else the sample list, then what the URL asks for (or the first sample), then
    /// its baseline.
    pub fn load_initial(self, initial: &ViewState, inline: Option<crate::standalone::Inlined>) {
        let wanted_device = initial.device.clone();
        if let Some(inline) = inline {
            spawn_local(async move {
                match inline {
                    Ok((manifest, texts)) => {
                        for (entry, text) in manifest.bundles.iter().zip(texts) {
                            match crate::loading::parse_bytes(&entry.name, text.into_bytes()) {
                                Ok(l) if entry.baseline => self.add_baseline(l),
                                Ok(l) => self.add(l),
                                Err(e) => self.error.set(Some(e)),
                            }
                        }
                        self.device.set(wanted_device);
                    }
                    Err(e) => self.error.set(Some(e)),
                }
                self.loading.set(false);
            });
            return;
        }
        let (first, base_url) = (initial.bundle.clone(), initial.baseline.clone());
        let (traces, machine_url) = (initial.trace.clone(), initial.machine.clone());
        let embed = self.embed;
        spawn_local(async move {
            // An embedded chart shows what its page names, never a sample in its place.
            let list = if embed {
                Vec::new()
            } else {
                fetch_samples().await
            };
            self.samples.set(list.clone());
            let name_of = |url: &str| {
                list.iter()
                    .find(|e| e.url() == url)
                    .map(|e| format!("sample: {}", e.file))
            };
            let importing = !traces.is_empty();
            if importing {
                self.url_import
                    .set_value(Some((traces.clone(), machine_url.clone())));
                self.import_urls(traces, machine_url);
            }
            let first = first
                .or_else(|| list.first().map(SampleEntry::url))
                .filter(|_| !importing);
            if let Some(url) = first {
                match fetch_bundle(&url, name_of(&url).as_deref()).await {
                    Ok(l) => {
                        self.add(l);
                        self.device.set(wanted_device);
                    }
                    Err(e) => self.error.set(Some(e)),
                }
            }
            if let Some(url) = base_url {
                match fetch_bundle(&url, name_of(&url).as_deref()).await {
                    Ok(l) => self.add_baseline(l),
                    Err(e) => self.error.set(Some(format!("baseline: {e}"))),
                }
            }
            self.loading.set(false);
        });
    }

    /// Opens a sample by its URL, as the current bundle or as the baseline.
    pub fn open_sample(self, url: String, as_baseline: bool) {
        let name = self.samples.with_untracked(|l| {
            l.iter()
                .find(|e| e.url() == url)
                .map(|e| format!("sample: {}", e.file))
        });
        self.loading.set(true);
        spawn_local(async move {
            match fetch_bundle(&url, name.as_deref()).await {
                Ok(l) if as_baseline => self.add_baseline(l),
                Ok(l) => self.add(l),
                Err(e) => self.error.set(Some(e)),
            }
            self.loading.set(false);
        });
    }

    /// Opens files chosen or dropped ([`AppState::open_inputs`]): each bundle as the current
    /// bundle in turn; traces and Nsight Compute CSV imported in the page first.
    pub fn open_files(self, files: Option<web_sys::FileList>) {
        if let Some(files) = files {
            self.open_inputs(files.into(), Vec::new(), None, None, None, false);
        }
    }

    /// Opens `inputs` ([`crate::import::open`]: files, URLs to import, or an earlier import's
    /// key), imports placed against `machine` (a machine bundle open here) or `machine_url`
    /// (or, `same_machine`, the one the earlier import was placed against) with the page's
    /// import options: each bundle shown in turn ([`AppState::put`]; the bundle at `replace`
    /// replaced, for an import made again), each failure's message shown.
    pub fn open_inputs(
        self,
        inputs: JsValue,
        urls: Vec<String>,
        machine: Option<Loaded>,
        machine_url: Option<String>,
        replace: Option<usize>,
        same_machine: bool,
    ) {
        let flags = self.import_flags.get_untracked();
        let supersedable = same_machine || replace.is_some() || !urls.is_empty();
        if supersedable {
            self.imports_asked.update_value(|n| *n += 1);
        }
        let asked = self.imports_asked.get_value();
        spawn_local(async move {
            let opened =
                crate::import::open(inputs, urls, machine, machine_url, flags, same_machine).await;
            if supersedable && asked != self.imports_asked.get_value() {
                return;
            }
            for r in opened.results {
                match r {
                    Ok(l) => self.put(l, replace, opened.alone),
                    Err(e) => self.error.set(Some(e)),
                }
            }
        });
    }

    /// Makes the import `source` again against the open bundle `machine` (none: without one),
    /// in place of the bundle at `at`.
    fn import_again(self, source: ImportSource, machine: Option<usize>, at: usize) {
        let m = machine.and_then(|i| self.bundles.get_untracked().get(i).cloned());
        self.open_inputs(source.key.into(), source.urls, m, None, Some(at), false);
    }

    /// `?trace=URL` (several: the CSV captures of one run), imported here against
    /// `?machine=URL` when given (fetched by the importer).
    fn import_urls(self, traces: Vec<String>, machine_url: Option<String>) {
        let inputs = js_sys::Array::new();
        for t in &traces {
            inputs.push(&JsValue::from_str(t));
        }
        self.open_inputs(inputs.into(), traces, None, machine_url, None, false);
    }

    /// Import options changed: the import shown, if one is, made again with them against the
    /// same machine; with nothing shown, the page's `?trace=` import (refused with the options
    /// before) made again.
    pub fn reimport(self) {
        if let Some((source, at)) = self.shown_import() {
            self.open_inputs(
                source.key.into(),
                source.urls,
                None,
                source.machine_url,
                Some(at),
                true,
            );
        } else if self.bundles.with_untracked(Vec::is_empty)
            && let Some((traces, machine_url)) = self.url_import.get_value()
        {
            self.import_urls(traces, machine_url);
        }
    }

    /// The import shown, if the bundle shown is one: its source and index.
    fn shown_import(self) -> Option<(ImportSource, usize)> {
        let cur = self.current.get_untracked();
        let shown = self.bundles.get_untracked().get(cur)?.import.clone();
        shown.map(|s| (s, cur))
    }

    /// A bundle opened: shown, or put in place of the bundle at `replace` (the same import made
    /// against another machine). A machine bundle opened `alone` (no kernels) while an import
    /// is shown bounds that import instead ("Ceilings from").
    pub fn put(self, l: Loaded, replace: Option<usize>, alone: bool) {
        let machine = alone && l.bundle.kernels.is_empty() && !l.bundle.machines.is_empty();
        match replace {
            Some(i) => {
                self.bundles.update(|b| {
                    if let Some(x) = b.get_mut(i) {
                        *x = l;
                    }
                });
                self.domain.set(None);
                self.error.set(None);
            }
            None if machine && self.shown_import().is_some() => {
                let i = self.open(l);
                self.use_machine(Some(i));
            }
            None => self.add(l),
        }
    }

    /// "Ceilings from" the open bundle `i` (`None`: the bundle's own): an import shown is made
    /// again against that machine (as `roofline import --machine`); any other bundle's kernels
    /// are placed against its ceilings (what-if).
    pub fn use_machine(self, i: Option<usize>) {
        match self.shown_import() {
            Some((source, at)) => self.import_again(source, i, at),
            None => self.machine_from.set(i),
        }
    }

    /// "Save bundle": the bundle shown, as its bytes (for an import, the bundle this page made).
    pub fn save_bundle(self) {
        self.bundles.with_untracked(|b| {
            if let Some(l) = b.get(self.current.get_untracked()) {
                let stem = untrack(|| self.file_stem());
                let name = if l.import.is_some() {
                    format!("{stem}.roofline.json")
                } else {
                    format!("{stem}.json")
                };
                crate::export::download_bytes(&name, "application/json", &l.raw);
            }
        });
    }

    /// The view as the URL names it (tracked: the URL effect follows it; "Save as HTML" reads it
    /// untracked).
    pub fn view_state(self) -> ViewState {
        let (bundle, base, import) = self.bundles.with(|b| {
            let cur = b.get(self.current.get());
            (
                cur.filter(|l| l.import.is_none())
                    .and_then(|l| l.url.clone()),
                self.baseline
                    .get()
                    .and_then(|i| b.get(i))
                    .and_then(|l| l.url.clone()),
                cur.and_then(|l| l.import.clone()),
            )
        });
        let (trace, machine, import) = import
            .map(|s| (s.urls, s.machine_url, s.flags))
            .unwrap_or_default();
        ViewState {
            bundle,
            baseline: base,
            trace,
            machine,
            import,
            device: self.device.get(),
            view: self.view.get(),
            group: self.group_asked.get(),
            kernel: self.selected.get(),
            filter: self.filter.get(),
            levels: self.levels.get(),
            top: Some(self.top.get()),
            labels: Some(self.label_n.get()),
            dark: self.dark.get(),
            pairs: self.pairs.get(),
        }
    }

    /// The current bundle's file name without `.json`, for downloads (`bundle` when none).
    pub fn file_stem(self) -> String {
        self.bundles.with(|b| {
            b.get(self.current.get())
                .map(|l| {
                    l.name
                        .split(" and ")
                        .next()
                        .unwrap_or_default()
                        .rsplit('/')
                        .next()
                        .unwrap_or("bundle")
                        .trim_end_matches(".gz")
                        .trim_end_matches(".json")
                        .trim_end_matches(".csv")
                        .replace("sample: ", "")
                })
                .unwrap_or_else(|| "bundle".into())
        })
    }

    /// "Save as HTML": the bundle shown and its baseline, inlined with the view in one file.
    pub fn save_html(self) {
        let cur = self.current.get_untracked();
        let Some((l, base)) = self.bundles.with_untracked(|b| {
            let base = self
                .baseline
                .get_untracked()
                .filter(|i| *i != cur)
                .and_then(|i| b.get(i).cloned());
            b.get(cur).cloned().map(|l| (l, base))
        }) else {
            return;
        };
        let state = ViewState {
            bundle: None,
            trace: Vec::new(),
            machine: None,
            import: ImportFlags::default(),
            baseline: None,
            ..untrack(|| self.view_state())
        };
        let file = format!("{}.html", untrack(|| self.file_stem()));
        let error = self.error;
        spawn_local(async move {
            let saved = crate::standalone::save(&file, state.to_query(), &l, base.as_ref()).await;
            if let Err(e) = saved {
                error.set(Some(format!("Save as HTML: {e}")));
            }
        });
    }

    /// The current bundle with more than one device: each device's id and name.
    pub fn devices(self) -> Vec<(String, String)> {
        self.bundles.with(|b| {
            b.get(self.current.get())
                .map(|l| {
                    l.bundle
                        .devices
                        .iter()
                        .map(|d| (d.id.clone(), d.name.clone()))
                        .collect()
                })
                .unwrap_or_default()
        })
    }
}

/// The ceilings in use: the bundle's own or another's (what-if), then hand edits.
fn ceilings_memo(
    bundles: RwSignal<Vec<Loaded>>,
    current: RwSignal<usize>,
    device: RwSignal<Option<String>>,
    machine_from: RwSignal<Option<usize>>,
    edits: RwSignal<Edits>,
) -> Memo<Option<Ceilings>> {
    Memo::new(move |_| {
        let all = bundles.get();
        let dev = device.get();
        let own = all
            .get(current.get())
            .and_then(|l| Ceilings::of_device(&l.bundle, dev.as_deref()));
        let base = match machine_from.get() {
            Some(i) => all
                .get(i)
                .and_then(|l| Ceilings::of_device(&l.bundle, None))
                .or(own),
            None => own,
        };
        let e = edits.get();
        match base {
            Some(c) => Some(e.apply(c)),
            None if !e.is_empty() => Some(e.apply(Ceilings::default())),
            None => None,
        }
    })
}

/// One analysis of the current bundle's kernels against the ceilings in use, shared by the
/// chart and the table. Recomputed only when its inputs change, so it is always "changed":
/// comparing two analyses of 10,000 kernels field by field costs more than the table it feeds.
/// When only the ceilings changed (a machine swap, a what-if edit), the earlier analysis's
/// kernels and display names are reused (`Analysed::against`); otherwise a new analysis of the
/// same kernels still keeps the earlier one's display names.
fn analysed_memo(
    bundles: RwSignal<Vec<Loaded>>,
    current: RwSignal<usize>,
    device: RwSignal<Option<String>>,
    group_by: Memo<GroupBy>,
    ceilings: Memo<Option<Ceilings>>,
    own: OwnAnalyses,
) -> Memo<Option<Arc<Analysed>>> {
    // The kernels analysed last: which bundle, grouped how, which device.
    let analysed_kernels = StoredValue::new(None::<(Weak<Bundle>, GroupBy, Option<String>)>);
    Memo::new_with_compare(
        move |earlier: Option<&Option<Arc<Analysed>>>| {
            let all = bundles.get();
            let l = all.get(current.get())?;
            let c = ceilings.get();
            let dev = device.get();
            let by = group_by.get();
            let same_kernels = analysed_kernels.with_value(|k| {
                k.as_ref()
                    .is_some_and(|(b, g, d)| is_bundle(b, l) && *g == by && *d == dev)
            });
            analysed_kernels.set_value(Some((Arc::downgrade(&l.bundle), by, dev.clone())));
            let a = Arc::new(perf::span("roofline:analysis", || match (earlier, c) {
                (Some(Some(e)), Some(c)) if same_kernels => e.against(c),
                (earlier, c) => {
                    let a = Analysed::new(&grouped(l, by), dev.as_deref(), c.as_ref());
                    if let Some(Some(e)) = earlier {
                        a.adopt_names(e);
                    }
                    a
                }
            }));
            own.keep(l, by, &a);
            Some(a)
        },
        |_, _| true,
    )
}

/// The baseline's analysis, against its own ceilings (its first device): the one kept from when
/// it was shown, if any.
fn baseline_memo(
    bundles: RwSignal<Vec<Loaded>>,
    current: RwSignal<usize>,
    baseline: RwSignal<Option<usize>>,
    group_by: Memo<GroupBy>,
    own: OwnAnalyses,
) -> Memo<Option<Arc<Analysed>>> {
    Memo::new_with_compare(
        move |_| {
            let i = baseline.get().filter(|i| *i != current.get())?;
            let by = group_by.get();
            bundles.with(|all| {
                let l = all.get(i)?;
                let a = own.find(l, by).unwrap_or_else(|| {
                    Arc::new(perf::span("roofline:baseline-analysis", || {
                        Analysed::new(&grouped(l, by), None, None)
                    }))
                });
                own.keep(l, by, &a);
                Some(a)
            })
        },
        |_, _| true,
    )
}

/// The width the page gives the chart, whole pixels: the document's width (without its scroll
/// bar) less the page's padding (none for an embedded chart).
pub fn page_width(embed: bool) -> usize {
    let width = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .map_or(900, |e| e.client_width());
    usize::try_from(width - if embed { 0 } else { 32 }).unwrap_or(0)
}

/// Keeps [`AppState::width`] in step with the window's width.
pub fn follow_the_width(st: AppState) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::prelude::Closure;
    let Some(w) = web_sys::window() else { return };
    let on_resize = Closure::<dyn Fn()>::new(move || {
        let width = page_width(st.embed);
        if width != st.width.get_untracked() {
            st.width.set(width);
        }
    });
    let _ = w.add_event_listener_with_callback("resize", on_resize.as_ref().unchecked_ref());
    // The page lives as long as the listener.
    on_resize.forget();
}

/// Whether a weak reference kept of a bundle is `l`'s bundle. (The reference keeps the
/// allocation, so no later bundle can take its address.)
fn is_bundle(kept: &Weak<Bundle>, l: &Loaded) -> bool {
    std::ptr::eq(kept.as_ptr(), Arc::as_ptr(&l.bundle))
}

/// The bundle as the view reads it: its kernels as they are, or grouped per PyTorch operator or
/// module (`roofline_model::analysis::group`, as `roofline info --group-by`: from the launches as imported,
/// each operator call's F and B counted once). Shared, not copied, when nothing is grouped.
fn grouped(l: &Loaded, by: GroupBy) -> Arc<Bundle> {
    match (&l.tagged, by) {
        (Some(raw), GroupBy::Operator | GroupBy::Module) => {
            let mut b = Bundle::clone(&l.bundle);
            b.kernels = roofline_model::analysis::group::group(raw, by);
            Arc::new(b)
        }
        _ => Arc::clone(&l.bundle),
    }
}

/// Keeps the URL in step with the view, so that a copied link reproduces it: written once the
/// view has kept still for a moment, not inside the change itself (`history.replaceState` costs
/// milliseconds, and of a burst of changes only the last matters).
pub fn follow_in_url(st: AppState) {
    /// How long the view keeps still before the URL follows it, milliseconds.
    const URL_WRITE_DELAY_MS: u64 = 120;
    let url_write = StoredValue::new(None::<TimeoutHandle>);
    Effect::new(move |_| {
        let state = st.view_state();
        if let Some(pending) = url_write.get_value() {
            pending.clear();
        }
        let handle = set_timeout_with_handle(
            move || url_state::write_to_location(&state),
            std::time::Duration::from_millis(URL_WRITE_DELAY_MS),
        );
        url_write.set_value(handle.ok());
    });
}

/// A bundle that has nothing for the hierarchical chart but points for the time-based one (a
/// torch.profiler trace imported without counters or a machine) opens on the time-based chart
/// (`chart::prefers_time_based`); once per bundle opened, so that a view chosen afterwards stays.
pub fn open_on_the_chart_with_points(st: AppState) {
    let opened_last = StoredValue::new(None::<Weak<Bundle>>);
    Effect::new(move |_| {
        let Some(b) = st
            .bundles
            .with(|all| all.get(st.current.get()).map(|l| Arc::clone(&l.bundle)))
        else {
            return;
        };
        let seen =
            opened_last.with_value(|w| w.as_ref().is_some_and(|w| w.as_ptr() == Arc::as_ptr(&b)));
        if seen {
            return;
        }
        opened_last.set_value(Some(Arc::downgrade(&b)));
        if st.view.get_untracked() == View::Hierarchical
            && st.analysed.with_untracked(|a| {
                a.as_ref().is_some_and(|a| {
                    roofline_model::chart::prefers_time_based(a, &st.levels.get_untracked())
                })
            })
        {
            st.view.set(View::Time);
        }
    });
}
