//! The page's header: what is open and shown (bundle, baseline, device, grouping), one picker
//! that opens a sample or a file, the view's tabs, where the ceilings come from, the import's
//! options, and the theme switch. Each picker is a small component over [`AppState`].

use leptos::prelude::*;

use roofline_model::analysis::group::GroupBy;
use roofline_model::chart::svg::esc;
use roofline_model::chart::view::View;
use wasm_bindgen::JsCast;

use crate::state::AppState;

/// The header.
#[component]
pub fn Header() -> impl IntoView {
    let st = AppState::get();
    view! {
        <header>
            <h1>"roofline"</h1>
            <OpenSelect />
            <BundleSelect />
            <BaselineSelect />
            <DeviceSelect />
            <GroupSelect />
            <ViewTabs />
            <MachineSelect />
            <ImportOptions />
            <button id="theme" on:click=move |_| st.dark.update(|d| *d = !*d)>"Light/dark"</button>
        </header>
    }
}

/// The open bundles; choosing one shows it.
#[component]
fn BundleSelect() -> impl IntoView {
    let st = AppState::get();
    let on_change = move |ev| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            st.current.set(i);
            if st.baseline.get_untracked() == Some(i) {
                st.baseline.set(None);
            }
            st.device.set(None);
            st.selected.set(None);
            st.domain.set(None);
        }
    };
    let options = move || {
        st.bundles
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, l)| {
                view! {
                    <option value=i.to_string() selected=move || st.current.get() == i>
                        {l.name}
                    </option>
                }
            })
            .collect_view()
    };
    view! {
        <label>
            "Bundle "
            <select id="bundle-select" on:change=on_change>
                {options}
            </select>
        </label>
    }
}

/// The value of the open picker's entry that chooses a file.
const OPEN_FILE: &str = "file:";

/// One picker to open a bundle: a sample served beside the site (a saved page has none) or a
/// file from disk (through the hidden file input): a bundle, a torch.profiler trace or Nsight
/// Compute CSV files, which the page imports.
#[component]
fn OpenSelect() -> impl IntoView {
    let st = AppState::get();
    let samples = move || {
        st.samples
            .get()
            .into_iter()
            .map(|e| {
                let url = e.url();
                view! { <option value=url>{format!("sample: {}", e.title)}</option> }
            })
            .collect_view()
    };
    view! {
        <label>
            "Open "
            <select
                id="open-select"
                on:change=move |ev| {
                    let select: web_sys::HtmlSelectElement = event_target(&ev);
                    let v = select.value();
                    select.set_value("");
                    if v == OPEN_FILE {
                        if let Some(input) = web_sys::window()
                            .and_then(|w| w.document())
                            .and_then(|d| d.get_element_by_id("file-input"))
                        {
                            use wasm_bindgen::JsCast;
                            if let Ok(input) = input.dyn_into::<web_sys::HtmlElement>() {
                                input.click();
                            }
                        }
                    } else if !v.is_empty() {
                        st.open_sample(v, false);
                    }
                }
            >
                <option value="">"a sample or a file…"</option>
                <option value=OPEN_FILE>"a file: bundle, trace or CSV…"</option>
                {samples}
            </select>
        </label>
        <input
            id="file-input"
            type="file"
            hidden=true
            accept=".json,.gz,.csv,.txt,application/json,text/csv"
            multiple=true
            on:change=move |ev| {
                let input: web_sys::HtmlInputElement = event_target(&ev);
                st.open_files(input.files());
            }
        />
    }
}

/// The baseline: none, another open bundle, or a sample not open yet.
#[component]
fn BaselineSelect() -> impl IntoView {
    let st = AppState::get();
    let on_change = move |ev| {
        let v = event_target_value(&ev);
        if let Some(url) = v.strip_prefix("sample:") {
            st.open_sample(url.to_string(), true);
        } else {
            st.baseline.set(
                v.parse::<usize>()
                    .ok()
                    .filter(|i| *i != st.current.get_untracked()),
            );
            st.domain.set(None);
        }
    };
    let options = move || {
        let open = st.bundles.get();
        let cur = st.current.get();
        let open_urls: Vec<Option<String>> = open.iter().map(|l| l.url.clone()).collect();
        let opened = open
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i != cur)
            .map(|(i, l)| {
                view! {
                    <option value=i.to_string() selected=move || st.baseline.get() == Some(i)>
                        {l.name}
                    </option>
                }
            })
            .collect_view();
        let unopened = st
            .samples
            .get()
            .into_iter()
            .filter(|e| !open_urls.contains(&Some(e.url())))
            .map(|e| view! { <option value=format!("sample:{}", e.url())>{format!("sample: {}", e.title)}</option> })
            .collect_view();
        (opened, unopened)
    };
    view! {
        <label>
            "Baseline "
            <select id="baseline-select" on:change=on_change>
                <option value="none" selected=move || st.baseline.get().is_none()>"none"</option>
                {options}
            </select>
        </label>
    }
}

/// The device shown, for bundles with more than one.
#[component]
fn DeviceSelect() -> impl IntoView {
    let st = AppState::get();
    move || {
        let devices = st.devices();
        (devices.len() > 1).then(|| {
            let first = devices[0].0.clone();
            let options = devices
                .into_iter()
                .enumerate()
                .map(|(i, (id, name))| {
                    let sel = id.clone();
                    view! {
                        <option value=id selected=move || st.device.get().map_or(i == 0, |d| d == sel)>
                            {format!("{id}: {name}")}
                        </option>
                    }
                })
                .collect_view();
            view! {
                <label>
                    "Device "
                    <select
                        id="device-select"
                        on:change=move |ev| {
                            let v = event_target_value(&ev);
                            st.device.set((v != first).then_some(v));
                            st.selected.set(None);
                            st.domain.set(None);
                        }
                    >
                        {options}
                    </select>
                </label>
            }
        })
    }
}

/// Grouping per kernel, operator or module: for bundles whose launches a torch.profiler import
/// linked to operators and modules (or while a grouping is chosen).
#[component]
fn GroupSelect() -> impl IntoView {
    let st = AppState::get();
    move || {
        let tagged = st
            .bundles
            .with(|b| b.get(st.current.get()).is_some_and(|l| l.tagged.is_some()));
        (tagged || st.group_by.get() != GroupBy::Kernel).then(|| {
            let options = GroupBy::ALL
                .into_iter()
                .map(|g| {
                    view! {
                        <option value=g.key() title=g.help() selected=move || st.group_by.get() == g>
                            {g.noun()}
                        </option>
                    }
                })
                .collect_view();
            view! {
                <label>
                    "Group by "
                    <select
                        id="group-select"
                        on:change=move |ev| {
                            let g = GroupBy::from_key(&event_target_value(&ev)).unwrap_or_default();
                            st.group_asked.set(Some(g));
                            st.selected.set(None);
                            st.domain.set(None);
                        }
                    >
                        {options}
                    </select>
                </label>
            }
        })
    }
}

/// The view's tabs.
#[component]
fn ViewTabs() -> impl IntoView {
    let st = AppState::get();
    let tabs = View::ALL
        .into_iter()
        .map(|v| {
            let label = match v {
                View::Hierarchical => "Hierarchical",
                View::Time => "Time-based",
                View::Machine => "Machine",
                View::Comm => "Communication",
            };
            view! {
                <button
                    id=format!("tab-{}", v.key())
                    role="tab"
                    class:active=move || st.view.get() == v
                    on:click=move |_| {
                        st.view.set(v);
                        st.domain.set(None);
                    }
                >
                    {label}
                </button>
            }
        })
        .collect_view();
    view! { <span class="tabs" role="tablist">{tabs}</span> }
}

/// Where the ceilings come from: this bundle's machine or another open bundle's (what-if; an
/// import is made again against it, as `roofline import --machine`); for an import, also a GPU
/// of the catalogue (`--ceilings datasheet:ID`, listed by the importer once an import is shown)
/// or none (`--no-datasheet`).
#[component]
fn MachineSelect() -> impl IntoView {
    let st = AppState::get();
    let import_shown = move || {
        st.bundles
            .with(|b| b.get(st.current.get()).is_some_and(|l| l.import.is_some()))
    };
    // The catalogue's entries are the importer's (open.js fills the group): not in this wasm.
    Effect::new(move || {
        if import_shown() {
            let chosen = st
                .import_flags
                .with(|f| f.ceilings.clone().unwrap_or_default());
            let _ = crate::import::catalogue_fill(&chosen);
        }
    });
    let options = move || {
        st.bundles
            .get()
            .into_iter()
            .enumerate()
            .filter(|(_, l)| !l.bundle.machines.is_empty())
            .map(|(i, l)| view! { <option value=i.to_string()>{l.name}</option> })
            .collect_view()
    };
    view! {
        <label>
            "Ceilings from "
            <select
                id="machine-select"
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let machine = v.parse::<usize>().ok();
                    if machine.is_none() {
                        st.import_flags.update(|f| f.ceilings = (v != "own").then_some(v));
                    }
                    st.use_machine(machine);
                }
            >
                <option value="own">"this bundle"</option>
                {options}
                {move || import_shown().then(|| view! {
                    <optgroup id="catalogue" label="GPU catalogue (datasheet)"></optgroup>
                    <option value="none">"no ceilings (--no-datasheet)"</option>
                })}
            </select>
        </label>
    }
}

/// `roofline import`'s options for the traces and CSV imported here: changing one makes the
/// import shown again with it (the importer checks them as the CLI does, with its messages).
/// Written as one piece of HTML with one handler: the first paint's budget has no room for a
/// component per field.
#[component]
fn ImportOptions() -> impl IntoView {
    let st = AppState::get();
    let f = st.import_flags.get_untracked();
    let on = |b: bool, word: &str| if b { word.to_string() } else { String::new() };
    let html = format!(
        r#"<summary>Import options</summary><label>--arch <input id="import-arch" size="4" placeholder="9.0" value="{}"></label> <label>--convention <select id="import-convention"><option value="">current</option><option value="2020"{}>2020 (the study)</option>{}</select></label> <label><input type="checkbox" id="import-allow-partial"{}>--allow-partial</label> <label><input type="checkbox" id="import-allow-mismatch"{}>--allow-machine-mismatch</label>"#,
        esc(f.arch.as_deref().unwrap_or_default()),
        on(f.convention.as_deref() == Some("2020"), " selected"),
        // Another value given (`convention=current`, or one the importer will refuse) shows as
        // it is, so that choosing "current" clears it.
        match f.convention.as_deref() {
            None | Some("2020") => String::new(),
            Some(c) => format!(r#"<option value="{0}" selected>{0}</option>"#, esc(c)),
        },
        on(f.allow_partial, " checked"),
        on(f.allow_machine_mismatch, " checked"),
    );
    view! {
        <details
            id="import-options"
            inner_html=html
            on:change=move |ev| {
                let id = ev.target().map(|t| t.unchecked_into::<web_sys::Element>().id());
                let value = event_target_value(&ev);
                let text = (!value.is_empty()).then_some(value);
                let checked = event_target_checked(&ev);
                st.import_flags.update(|f| match id.as_deref() {
                    Some("import-arch") => f.arch = text,
                    Some("import-convention") => f.convention = text,
                    Some("import-allow-partial") => f.allow_partial = checked,
                    _ => f.allow_machine_mismatch = checked,
                });
                st.reimport();
            }
        ></details>
    }
}
