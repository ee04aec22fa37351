//! Pairing by hand, under a comparison's chart: for the kernel selected in the table (or on the
//! chart), what the comparison made of it, and the means to change it. A new kernel can be
//! paired with a gone one (its doubtful counterpart offered first), a pair can be kept apart,
//! and either undone; the pairs are kept in the URL (`pair=`, `roofline_model::chart::view`). For an
//! operator or module, the kernels it launched before and after.
//!
//! One element tree whose parts show or hide (a tree per case cost the page's wasm kilobytes).

use leptos::prelude::*;

use roofline_model::analysis::compare::{CompareRow, ManualPair, Match, Presence};

use crate::state::AppState;

/// What the bar shows for the selection.
#[derive(Clone, Debug, Default, PartialEq)]
struct Shown {
    /// A comparison is open.
    comparing: bool,
    /// The selected kernel's full name (empty: none, or not in the current run).
    name: String,
    /// What the comparison made of it, in words.
    text: String,
    /// The gone kernels it may be paired with (full name, text), its doubtful counterpart first;
    /// empty when it is paired.
    candidates: Vec<(String, String)>,
    /// It is paired by the rules (it can be kept apart).
    paired: bool,
    /// Its pairing was made by hand (it can be undone).
    by_hand: bool,
    /// The kernels an operator launched before and after, in words.
    launched: String,
}

/// What the bar shows: the selected row of the comparison, if any.
fn shown(st: AppState) -> Shown {
    let sel = st.selected.get();
    let by_hand = st.pairs.get();
    let unit = st.group_by.get().noun();
    st.comparison.with(|c| {
        let Some(c) = c else {
            return Shown::default();
        };
        let row: Option<&CompareRow> = sel
            .as_deref()
            .and_then(|s| c.rows.iter().find(|r| r.current.is_some() && r.name == s));
        let Some(row) = row else {
            return Shown {
                comparing: true,
                text: format!(
                    "Select a {unit} in the table to see how it was paired with the baseline, or to pair it by hand."
                ),
                by_hand: !by_hand.is_empty(),
                ..Shown::default()
            };
        };
        let short = c.display_name(row);
        let mut candidates = Vec::new();
        if row.presence != Presence::Both {
            if let Some(d) = &row.doubt {
                candidates.push((
                    d.name.clone(),
                    format!("{} (doubtful: {})", d.display, d.reason),
                ));
            }
            candidates.extend(
                c.rows
                    .iter()
                    .filter(|r| r.presence == Presence::Gone)
                    .filter(|r| row.doubt.as_ref().is_none_or(|d| d.name != r.name))
                    .map(|r| (r.name.clone(), r.short_name())),
            );
        }
        let how = row
            .quality
            .map(|q| format!(" ({})", q.describe()))
            .unwrap_or_default();
        Shown {
            comparing: true,
            name: row.name.clone(),
            text: format!("{short}: {}{how}.", row.transition()),
            candidates,
            paired: row.presence == Presence::Both && row.quality != Some(Match::Manual),
            by_hand: by_hand.iter().any(|p| p.current == row.name),
            launched: row
                .launched
                .as_ref()
                .map(|l| format!("{short} launched {}", l.line()))
                .unwrap_or_default(),
        }
    })
}

/// The pairing bar, while a baseline is chosen.
#[component]
pub fn PairBar() -> impl IntoView {
    let st = AppState::get();
    // Each part reads what it needs afresh (a memo of its own type cost the page's wasm more
    // than a few lookups cost its time).
    let shown = move || shown(st);
    let chosen = RwSignal::new(String::new());
    let name = move || shown().name;
    let pair = move |baseline: Option<String>| {
        let current = name();
        if current.is_empty() {
            return;
        }
        st.pairs.update(|p| {
            p.retain(|x| x.current != current);
            p.push(ManualPair { current, baseline });
        });
    };
    let undo = move |_| {
        let current = name();
        st.pairs.update(|p| {
            if current.is_empty() {
                p.clear();
            } else {
                p.retain(|x| x.current != current);
            }
        });
    };
    let options = move || {
        let list = shown().candidates;
        chosen.set(list.first().map(|o| o.0.clone()).unwrap_or_default());
        list.into_iter()
            .map(|(full, text)| view! { <option value=full>{text}</option> })
            .collect_view()
    };
    // Which parts show: classes on the bar, one reactive attribute for all (CSS hides the rest).
    let class = move || {
        let s = shown();
        let mut c = String::from("pair-bar");
        for (on, name) in [
            (!s.comparing, " off"),
            (!s.candidates.is_empty(), " can-pair"),
            (s.paired, " paired"),
            (s.by_hand, " by-hand"),
            (!s.launched.is_empty(), " has-launched"),
        ] {
            if on {
                c.push_str(name);
            }
        }
        c
    };
    view! {
        <div class=class id="pair-bar">
            <span>{move || shown().text}</span>
            <span class="can-pair">
                " Pair it by hand with the baseline's "
                <select id="pair-select" on:change=move |ev| chosen.set(event_target_value(&ev))>
                    {options}
                </select>
                " "
                <button id="pair-button" on:click=move |_| pair(Some(chosen.get_untracked()))>"Pair"</button>
            </span>
            " "
            <button id="unpair" class="paired" on:click=move |_| pair(None)>
                "Keep apart"
            </button>
            " "
            <button id="undo-pair" class="by-hand" on:click=undo>
                {move || if shown().name.is_empty() { "Undo every pairing by hand" } else { "Undo" }}
            </button>
            <p class="launched has-launched" id="launched">
                {move || shown().launched}
            </p>
        </div>
    }
}
