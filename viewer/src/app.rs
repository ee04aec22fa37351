//! The application: the page's state as signals, the memos that call the model (one
//! [`Analysed`] per bundle and ceilings, one [`Scene`] per view), the header and toolbar, and the
//! chart area. Loading, the machine view, the kernel table and the URL state have their modules.
//!
//! Every figure comes from `roofline_model`; edits only change the [`Ceilings`] it is given.

use leptos::prelude::*;
use leptos::task::spawn_local;
use std::borrow::Cow;

use roofline_model::bundle::{Bundle, Datapath, MemoryLevel};
use roofline_model::ceilings::Ceilings;
use roofline_model::chart::{self, Analysed, ChartOptions, Domain, Scene};
use roofline_model::compare::{Overlay, compare, compare_scene, compare_scene_paired};
use roofline_model::group::GroupBy;
use std::sync::Arc;

use crate::chart_view::ChartView;
use crate::export;
use crate::kernel_table::KernelTable;
use crate::loading::{Loaded, SampleEntry, fetch_bundle, fetch_samples, read_file};
use crate::machine_view::{Edits, MachineView};
use crate::perf;
use crate::url_state::{self, UrlState, View};

/// The whole page; `embed` gives the compact chrome for iframes.
#[component]
pub fn App(
    /// Compact chrome (chart only) for `embed.html`.
    embed: bool,
) -> impl IntoView {
    // A saved standalone page holds its bundles and view; a query in its URL wins over the view.
    let inline = crate::standalone::inlined();
    let initial = match &inline {
        Some(Ok((m, _))) => {
            let here = web_sys::window()
                .and_then(|w| w.location().search().ok())
                .unwrap_or_default();
            url_state::from_query(if here.len() > 1 { &here } else { &m.query })
        }
        _ => url_state::from_location(),
    };
    let bundles: RwSignal<Vec<Loaded>> = RwSignal::new(Vec::new());
    let samples: RwSignal<Vec<SampleEntry>> = RwSignal::new(Vec::new());
    let current = RwSignal::new(0usize);
    let baseline = RwSignal::new(None::<usize>);
    let device = RwSignal::new(initial.device.clone());
    let machine_from = RwSignal::new(None::<usize>);
    let view_kind = RwSignal::new(initial.view);
    let group_by = RwSignal::new(initial.group);
    let selected = RwSignal::new(initial.kernel.clone());
    let isolate = RwSignal::new(false);
    let filter = RwSignal::new(initial.filter.clone());
    let top = RwSignal::new(initial.top.unwrap_or(if embed {
        12
    } else {
        ChartOptions::browser().top_kernels
    }));
    let label_n = RwSignal::new(initial.labels.unwrap_or(if embed { 6 } else { 8 }));
    let levels = RwSignal::new(initial.levels.clone());
    let hidden_paths = RwSignal::new(Vec::<Datapath>::new());
    let edits = RwSignal::new(Edits::default());
    let domain = RwSignal::new(None::<Domain>);
    let error = RwSignal::new(None::<String>);
    let loading = RwSignal::new(true);
    let dark = RwSignal::new(initial.dark);

    // A bundle opened: it becomes the current one (or is switched to when already open).
    let add = move |l: Loaded| {
        let open =
            bundles.with_untracked(|b| b.iter().position(|x| x.url.is_some() && x.url == l.url));
        let i = open.unwrap_or_else(|| {
            bundles.update(|b| b.push(l));
            bundles.with_untracked(Vec::len) - 1
        });
        current.set(i);
        if baseline.get_untracked() == Some(i) {
            baseline.set(None);
        }
        device.set(None);
        domain.set(None);
        error.set(None);
        i
    };
    // A bundle opened as the baseline, keeping the current one.
    let add_baseline = move |l: Loaded| {
        let open =
            bundles.with_untracked(|b| b.iter().position(|x| x.url.is_some() && x.url == l.url));
        let i = open.unwrap_or_else(|| {
            bundles.update(|b| b.push(l));
            bundles.with_untracked(Vec::len) - 1
        });
        if i != current.get_untracked() {
            baseline.set(Some(i));
        }
        domain.set(None);
    };

    // A standalone page's own bundles: the run shown, then the baseline.
    if let Some(inline) = inline {
        let wanted_device = initial.device;
        spawn_local(async move {
            match inline {
                Ok((manifest, texts)) => {
                    for (entry, text) in manifest.bundles.iter().zip(texts) {
                        match crate::loading::parse_bytes(&entry.name, text.as_bytes()) {
                            Ok(l) if entry.baseline => add_baseline(l),
                            Ok(l) => {
                                add(l);
                            }
                            Err(e) => error.set(Some(e)),
                        }
                    }
                    device.set(wanted_device);
                }
                Err(e) => error.set(Some(e)),
            }
            loading.set(false);
        });
    } else
    // The sample list, then what the URL asks for (or the first sample), then its baseline.
    {
        let (first, base_url) = (initial.bundle.clone(), initial.baseline.clone());
        let wanted_device = initial.device;
        spawn_local(async move {
            let list = fetch_samples().await;
            samples.set(list.clone());
            let name_of = |url: &str| {
                list.iter()
                    .find(|e| e.url() == url)
                    .map(|e| format!("sample: {}", e.file))
            };
            let first = first.or_else(|| list.first().map(SampleEntry::url));
            if let Some(url) = first {
                match fetch_bundle(&url, name_of(&url).as_deref()).await {
                    Ok(l) => {
                        add(l);
                        device.set(wanted_device);
                    }
                    Err(e) => error.set(Some(e)),
                }
            }
            if let Some(url) = base_url {
                match fetch_bundle(&url, name_of(&url).as_deref()).await {
                    Ok(l) => add_baseline(l),
                    Err(e) => error.set(Some(format!("baseline: {e}"))),
                }
            }
            loading.set(false);
        });
    }

    let open_sample = move |url: String, as_baseline: bool| {
        let name = samples.with_untracked(|l| {
            l.iter()
                .find(|e| e.url() == url)
                .map(|e| format!("sample: {}", e.file))
        });
        loading.set(true);
        spawn_local(async move {
            match fetch_bundle(&url, name.as_deref()).await {
                Ok(l) if as_baseline => add_baseline(l),
                Ok(l) => {
                    add(l);
                }
                Err(e) => error.set(Some(e)),
            }
            loading.set(false);
        });
    };

    let open_files = move |files: Option<web_sys::FileList>| {
        let Some(files) = files else { return };
        for i in 0..files.length() {
            if let Some(f) = files.get(i) {
                spawn_local(async move {
                    match read_file(f).await {
                        Ok(l) => {
                            add(l);
                        }
                        Err(e) => error.set(Some(e)),
                    }
                });
            }
        }
    };

    // The view as the URL names it (read in the effect below, and by "Save as HTML").
    let view_state = move || {
        let (bundle, base) = bundles.with(|b| {
            (
                b.get(current.get()).and_then(|l| l.url.clone()),
                baseline
                    .get()
                    .and_then(|i| b.get(i))
                    .and_then(|l| l.url.clone()),
            )
        });
        UrlState {
            bundle,
            baseline: base,
            device: device.get(),
            view: view_kind.get(),
            group: group_by.get(),
            kernel: selected.get(),
            filter: filter.get(),
            levels: levels.get(),
            top: Some(top.get()),
            labels: Some(label_n.get()),
            dark: dark.get(),
        }
    };
    // Keep the URL in step with the view, so that a copied link reproduces it: written once the
    // view has kept still for a moment, not inside the change itself (`history.replaceState`
    // costs milliseconds, and of a burst of changes only the last matters).
    let url_write = StoredValue::new(None::<TimeoutHandle>);
    Effect::new(move |_| {
        let state = view_state();
        if let Some(pending) = url_write.get_value() {
            pending.clear();
        }
        let handle = set_timeout_with_handle(
            move || url_state::write_to_location(&state),
            std::time::Duration::from_millis(URL_WRITE_DELAY_MS),
        );
        url_write.set_value(handle.ok());
    });

    // The ceilings in use: the bundle's own or another's (what-if), then hand edits.
    let ceilings = Memo::new(move |_| {
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
    });

    // One analysis of the current bundle's kernels against the ceilings in use, shared by the
    // chart and the table. Recomputed only when its inputs change, so it is always "changed":
    // comparing two analyses of 10,000 kernels field by field costs more than the table it feeds.
    // When only the ceilings changed (a machine swap, a what-if edit), the earlier analysis's
    // kernels and display names are reused (`Analysed::against`); otherwise a new analysis of
    // the same kernels still keeps the earlier one's display names.
    let analysed_kernels =
        StoredValue::new(None::<(std::sync::Weak<Bundle>, GroupBy, Option<String>)>);
    // The latest analyses of open bundles against their own machines (what a baseline is
    // analysed against), by bundle and grouping: choosing as baseline a bundle shown before
    // takes its analysis instead of computing it again. (Weak references, as above.)
    let own_analyses =
        StoredValue::new(Vec::<(std::sync::Weak<Bundle>, GroupBy, Arc<Analysed>)>::new());
    let keep_own = move |l: &Loaded, by: GroupBy, a: &Arc<Analysed>| {
        if !a.is_own_analysis_of(&l.bundle) {
            return;
        }
        own_analyses.update_value(|v| {
            v.retain(|(b, g, _)| !(is_bundle(b, l) && *g == by));
            v.push((Arc::downgrade(&l.bundle), by, Arc::clone(a)));
            if v.len() > OWN_ANALYSES_KEPT {
                v.remove(0);
            }
        });
    };
    let analysed = Memo::new_with_compare(
        move |earlier: Option<&Option<Arc<Analysed>>>| {
            let all = bundles.get();
            let l = all.get(current.get())?;
            let c = ceilings.get();
            let dev = device.get();
            let by = group_by.get();
            // The kernels analysed: which bundle, grouped how, which device.
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
            keep_own(l, by, &a);
            Some(a)
        },
        |_, _| true,
    );

    // A bundle that has nothing for the hierarchical chart but points for the time-based one (a
    // torch.profiler trace imported without counters or a machine) opens on the time-based
    // chart (`chart::prefers_time_based`); once per bundle opened, so that a view chosen
    // afterwards stays.
    let opened_last = StoredValue::new(None::<std::sync::Weak<Bundle>>);
    Effect::new(move |_| {
        let Some(b) = bundles.with(|all| all.get(current.get()).map(|l| Arc::clone(&l.bundle)))
        else {
            return;
        };
        let seen =
            opened_last.with_value(|w| w.as_ref().is_some_and(|w| w.as_ptr() == Arc::as_ptr(&b)));
        if seen {
            return;
        }
        opened_last.set_value(Some(Arc::downgrade(&b)));
        if view_kind.get_untracked() == View::Hierarchical
            && analysed.with_untracked(|a| {
                a.as_ref()
                    .is_some_and(|a| chart::prefers_time_based(a, &levels.get_untracked()))
            })
        {
            view_kind.set(View::Time);
        }
    });

    // The baseline's analysis, against its own ceilings (its first device).
    let baseline_analysed = Memo::new_with_compare(
        move |_| {
            let i = baseline.get().filter(|i| *i != current.get())?;
            let by = group_by.get();
            bundles.with(|all| {
                let l = all.get(i)?;
                let kept = own_analyses.with_value(|v| {
                    v.iter()
                        .find(|(b, g, _)| is_bundle(b, l) && *g == by)
                        .map(|(_, _, a)| Arc::clone(a))
                });
                let a = kept.unwrap_or_else(|| {
                    Arc::new(perf::span("roofline:baseline-analysis", || {
                        Analysed::new(&grouped(l, by), None, None)
                    }))
                });
                keep_own(l, by, &a);
                Some(a)
            })
        },
        |_, _| true,
    );

    // The comparison table and summary, when a baseline is chosen.
    let comparison = Memo::new_with_compare(
        move |_| {
            baseline_analysed.with(|b| {
                let b = b.as_ref()?;
                analysed.with(|a| {
                    let a = a.as_ref()?;
                    Some(perf::span("roofline:compare", || compare(a, b)))
                })
            })
        },
        |_, _| true,
    );

    let scene = Memo::new(move |_| {
        // The analysis first (memos are lazy), so that the scene's measure is the scene's alone.
        analysed.with(|_| ());
        baseline_analysed.with(|_| ());
        comparison.with(|_| ());
        perf::span(
            "roofline:scene",
            || -> Result<(Scene, Option<Overlay>), String> {
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
                    device: device.get(),
                    ..ChartOptions::browser()
                };
                let kind = view_kind.get();
                let draw = match kind {
                    ChartKind::Hierarchical => chart::hierarchical_of,
                    ChartKind::Time | ChartKind::Machine => chart::time_based_of,
                };
                analysed.with(|a| {
                    let a = a.as_ref().ok_or(NO_BUNDLE)?;
                    let shown = shown_kernels(a, isolated.as_deref(), &needle);
                    baseline_analysed.with(|b| match b {
                        Some(b) => {
                            let base = shown_kernels(b, isolated.as_deref(), &needle);
                            // Both runs whole: the table's matching serves the chart too.
                            let whole =
                                matches!((&shown, &base), (Cow::Borrowed(_), Cow::Borrowed(_)));
                            let paired = whole.then(|| {
                                comparison.with(|c| {
                                    c.as_ref().map(|c| {
                                        compare_scene_paired(
                                            &shown, &base, &c.pairs, draw, &options,
                                        )
                                    })
                                })
                            });
                            let drawn = paired
                                .flatten()
                                .unwrap_or_else(|| compare_scene(&shown, &base, draw, &options));
                            drawn.map(|(s, o)| (s, Some(o))).map_err(|e| e.to_string())
                        }
                        None => draw(&shown, &options)
                            .map(|s| (s, None))
                            .map_err(|e| e.to_string()),
                    })
                })
            },
        )
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

    // "Save as HTML": the bundle shown and its baseline, inlined with the view in one file.
    let save_html = move |_| {
        let cur = current.get_untracked();
        let Some((l, base)) = bundles.with_untracked(|b| {
            let base = baseline
                .get_untracked()
                .filter(|i| *i != cur)
                .and_then(|i| b.get(i).cloned());
            b.get(cur).cloned().map(|l| (l, base))
        }) else {
            return;
        };
        let state = UrlState {
            bundle: None,
            baseline: None,
            ..untrack(view_state)
        };
        let file = format!("{}.html", untrack(csv_name));
        spawn_local(async move {
            let saved = crate::standalone::save(&file, state.to_query(), &l, base.as_ref()).await;
            if let Err(e) = saved {
                error.set(Some(format!("Save as HTML: {e}")));
            }
        });
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
            Ok((s, o)) => {
                let labels = roofline_model::labels::kernel_labels(&s, label_n.get());
                match o {
                    Some(o) => view! { <ChartView scene=s selected=selected domain=domain overlay=o labels=labels /> }.into_any(),
                    None => view! { <ChartView scene=s selected=selected domain=domain labels=labels /> }.into_any(),
                }
            }
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
                                if baseline.get_untracked() == Some(i) {
                                    baseline.set(None);
                                }
                                device.set(None);
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
                // The sample picker, where there are samples (a saved page has none).
                {move || (!samples.with(Vec::is_empty)).then(|| view! {
                    <label>
                        "Sample "
                        <select
                            id="sample-select"
                            on:change=move |ev| {
                                let url = event_target_value(&ev);
                                if !url.is_empty() {
                                    open_sample(url, false);
                                }
                            }
                        >
                            <option value="">"open a sample…"</option>
                            {move || {
                                samples
                                    .get()
                                    .into_iter()
                                    .map(|e| { let url = e.url(); view! { <option value=url>{e.title}</option> } })
                                    .collect_view()
                            }}
                        </select>
                    </label>
                })}
                <label>
                    "Baseline "
                    <select
                        id="baseline-select"
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            if let Some(url) = v.strip_prefix("sample:") {
                                open_sample(url.to_string(), true);
                            } else {
                                baseline.set(v.parse::<usize>().ok().filter(|i| *i != current.get_untracked()));
                                domain.set(None);
                            }
                        }
                    >
                        <option value="none" selected=move || baseline.get().is_none()>"none"</option>
                        {move || {
                            let open = bundles.get();
                            let cur = current.get();
                            let open_urls: Vec<Option<String>> = open.iter().map(|l| l.url.clone()).collect();
                            let opened = open
                                .into_iter()
                                .enumerate()
                                .filter(|(i, _)| *i != cur)
                                .map(|(i, l)| {
                                    view! {
                                        <option value=i.to_string() selected=move || baseline.get() == Some(i)>
                                            {l.name}
                                        </option>
                                    }
                                })
                                .collect_view();
                            let unopened = samples
                                .get()
                                .into_iter()
                                .filter(|e| !open_urls.contains(&Some(e.url())))
                                .map(|e| view! { <option value=format!("sample:{}", e.url())>{format!("sample: {}", e.title)}</option> })
                                .collect_view();
                            (opened, unopened)
                        }}
                    </select>
                </label>
                {move || {
                    let devices = bundles.with(|b| {
                        b.get(current.get())
                            .map(|l| l.bundle.devices.iter().map(|d| (d.id.clone(), d.name.clone())).collect::<Vec<_>>())
                            .unwrap_or_default()
                    });
                    (devices.len() > 1).then(|| {
                        let first = devices[0].0.clone();
                        view! {
                            <label>
                                "Device "
                                <select
                                    id="device-select"
                                    on:change=move |ev| {
                                        let v = event_target_value(&ev);
                                        device.set((v != first).then_some(v));
                                        selected.set(None);
                                        domain.set(None);
                                    }
                                >
                                    {devices
                                        .into_iter()
                                        .enumerate()
                                        .map(|(i, (id, name))| {
                                            let sel = id.clone();
                                            view! {
                                                <option
                                                    value=id
                                                    selected=move || device.get().map_or(i == 0, |d| d == sel)
                                                >
                                                    {format!("{id}: {name}")}
                                                </option>
                                            }
                                        })
                                        .collect_view()}
                                </select>
                            </label>
                        }
                    })
                }}
                {move || {
                    // Grouping needs the operators and modules a torch.profiler import links.
                    let tagged = bundles.with(|b| {
                        b.get(current.get()).is_some_and(|l| l.tagged.is_some())
                    });
                    (tagged || group_by.get() != GroupBy::Kernel).then(|| {
                        view! {
                            <label>
                                "Group by "
                                <select
                                    id="group-select"
                                    on:change=move |ev| {
                                        let g = GroupBy::from_key(&event_target_value(&ev))
                                            .unwrap_or_default();
                                        group_by.set(g);
                                        selected.set(None);
                                        domain.set(None);
                                    }
                                >
                                    {GroupBy::ALL
                                        .into_iter()
                                        .map(|g| {
                                            view! {
                                                <option
                                                    value=g.key()
                                                    title=g.help()
                                                    selected=move || group_by.get() == g
                                                >
                                                    {g.noun()}
                                                </option>
                                            }
                                        })
                                        .collect_view()}
                                </select>
                            </label>
                        }
                    })
                }}
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
            {move || {
                comparison.with(|c| {
                    c.as_ref().map(|c| {
                        let base = bundles.with(|b| baseline.get().and_then(|i| b.get(i)).map(|l| l.name.clone()).unwrap_or_default());
                        view! {
                            <p class="compare-summary" id="compare-summary">
                                <b>{format!("Against {base}: ")}</b>
                                {c.summary.line()}
                                <span class="hint">{format!(" Arrows run from each {}'s baseline point to its current one; dashed rings: gone; thick rings: new.", c.summary.unit.noun())}</span>
                            </p>
                        }
                    })
                })
            }}
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
                <CountField id="top" label=" Top " min=1 max=500 value=top />
                <CountField id="labels" label=" Names " min=0 max=40 value=label_n />
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
                        let report = analysed.with_untracked(|a| a.as_deref().map(Analysed::report));
                        if let (Some(l), Some(r)) = (all.get(current.get_untracked()), report) {
                            export::download_text(&format!("{}-kernels.csv", csv_name()), "text/csv", &r.to_csv(&l.bundle));
                        }
                    }
                >
                    "CSV"
                </button>
                <button id="save-html" title="The viewer, this bundle (and its baseline) and this view in one file that opens with no server" on:click=save_html>"Save as HTML"</button>
            </div>
            {move || {
                if view_kind.get() == View::Machine {
                    let sweep = bundles.with(|all| {
                        all.get(current.get()).map(|l| {
                            chart::sweep(&l.bundle, &ChartOptions { domain: domain.get(), ..ChartOptions::browser() })
                        })
                    });
                    view! {
                        <MachineView ceilings=ceilings bundles=bundles current=current edits=edits device=device />
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
            <KernelTable analysed=analysed selected=selected filter=filter comparison=comparison group=group_by />
            <footer>
                "Drop bundle files anywhere on the page. Scroll on the chart to zoom, drag to pan. "
                "All figures are computed in your browser; bundles never leave it."
            </footer>
        </div>
    }
    .into_any()
}

/// Whether a weak reference kept of a bundle is `l`'s bundle. (The reference keeps the
/// allocation, so no later bundle can take its address.)
fn is_bundle(kept: &std::sync::Weak<Bundle>, l: &Loaded) -> bool {
    std::ptr::eq(kept.as_ptr(), Arc::as_ptr(&l.bundle))
}

/// The kernels a chart shows: the isolated one, or those whose name contains `needle` (lower
/// case), or all.
fn shown_kernels<'a>(a: &'a Analysed, isolated: Option<&str>, needle: &str) -> Cow<'a, Analysed> {
    if let Some(sel) = isolated {
        Cow::Owned(a.retain(|k| k.name == sel))
    } else if !needle.is_empty() {
        Cow::Owned(a.retain(|k| k.name.to_lowercase().contains(needle)))
    } else {
        Cow::Borrowed(a)
    }
}

/// Alias so the scene selector reads naturally.
type ChartKind = View;

/// What the chart area says before any bundle is open.
const NO_BUNDLE: &str = "open a bundle: a file, a sample, or ?bundle=URL";

/// Analyses of open bundles against their own machines kept for baseline choices.
const OWN_ANALYSES_KEPT: usize = 4;

/// How long the view keeps still before the URL follows it, milliseconds.
const URL_WRITE_DELAY_MS: u64 = 120;

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
.compare-summary { font-size: 13px; background: #eef4fb; padding: 6px 8px; border-radius: 4px; }
.dark .compare-summary { background: #20303f; }
.compare-summary .hint { color: #666; }
td.faster { color: #0a7a32; }
td.slower { color: #b00020; }
tr.gone td { color: #888; font-style: italic; }
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
.table-scroll { overflow-x: auto; margin-top: 8px; }
#kernel-table { display: block; width: 100%; min-width: calc(16em + 117ch); margin-top: 0; }
#kernel-table.comparing { min-width: calc(16em + 163ch); }
#kernel-table thead, #kernel-table tbody { display: block; }
#kernel-table tr { display: grid; grid-template-columns: minmax(16em, 1fr) 9ch 10ch 10ch 15ch 10ch 10ch 10ch 10ch 12ch 11ch 10ch; grid-auto-columns: 10ch 11ch 10ch 15ch; }
#kernel-table .baseline { grid-column: 13; }
#kernel-table .delta { grid-column: 14; }
#kernel-table .speedup { grid-column: 15; }
#kernel-table .bound-change { grid-column: 16; }
#kernel-table tbody tr { content-visibility: auto; contain-intrinsic-size: auto 21px; }
/* Figure cells do not clip: a clip per cell cost a compositing step per cell on every redraw. Their columns hold them (checked by the browser tests). */
#kernel-table td { white-space: nowrap; max-width: none; }
#kernel-table th { white-space: normal; align-self: end; max-width: none; }
th.sortable { cursor: pointer; }
.kernels tbody tr { cursor: pointer; }
.kernels tr.selected { background: #ffe9a8; color: #111; }
.machine input { width: 9em; }
footer { margin-top: 12px; font-size: 12px; color: #777; }
"#;

/// The bundle as the view reads it: its kernels as they are, or grouped per PyTorch operator or
/// module (`roofline_model::group`, as `roofline info --group-by`: from the launches as imported,
/// each operator call's F and B counted once). Shared, not copied, when nothing is grouped.
fn grouped(l: &Loaded, by: GroupBy) -> Arc<Bundle> {
    match (&l.tagged, by) {
        (Some(raw), GroupBy::Operator | GroupBy::Module) => {
            let mut b = Bundle::clone(&l.bundle);
            b.kernels = roofline_model::group::group(raw, by);
            Arc::new(b)
        }
        _ => Arc::clone(&l.bundle),
    }
}

/// A whole-number field: an entry is clamped to `min..=max`; one that is not a number is ignored.
#[component]
fn CountField(
    /// The input's id.
    id: &'static str,
    /// The text before it.
    label: &'static str,
    /// The smallest value.
    min: usize,
    /// The largest value.
    max: usize,
    /// The value it shows and sets.
    value: RwSignal<usize>,
) -> impl IntoView {
    view! {
        <label>
            {label}
            <input
                id=id
                type="number"
                min=min.to_string()
                max=max.to_string()
                prop:value=move || value.get().to_string()
                on:change=move |ev| {
                    if let Ok(n) = event_target_value(&ev).parse::<usize>() {
                        value.set(n.clamp(min, max));
                    }
                }
            />
        </label>
    }
}
