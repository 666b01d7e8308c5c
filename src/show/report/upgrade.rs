//! Older snapshots brought up to the current schema on read: the one place that knows what
//! changed between versions, so `compare` and `--baseline` take a schema-1 file as they take a
//! new one. Each step edits the JSON tree before it is read into the model's types.
//!
//! Schema 1 → 2: `taken`, `info.started` and the contention episodes' `start` and `end` from
//! `YYYY-mm-dd HH:MM:SS` (UTC) to RFC 3339 with the offset; `size` from `{"per_thread": N}` /
//! `{"split": N}` to `{"kind", "bytes"}`; `info.vendor.source` from prose to an enum beside
//! `source_text`; `info.duty` from a percentage to a fraction, and a suspect's
//! `cpu_before_pct` / `cpu_pct` (percent of one core) to `cpu_before_cores` / `cpu_cores`;
//! a cell's `groups[].group` from `{"node": 3}` / `{"core_type": "efficiency"}` to one shape,
//! `{"kind", "node", "core_type"}`; `grid.sets[].lands_in` worked out from the caches the file
//! lists; each cell's
//! `figures.noisy` worked out from its figures and rounds as the run did
//! (`stats::noisy_reasons`), and `bytes_per_cycle_from` said where it was left out (the clock
//! estimate). The fields schema 1 left out where a run had none (a file written before
//! counters existed, or a run without them: counters, disturbed rounds, causes, the median's
//! interval, steal, throttling) read as null, 0 or false, which is what schema 2 writes then.
//!
//! Schema 2 → 3: each cell's `repetitions` (`--repeat`), for an older file its one median.
//!
//! Schema 3 → 4: the idle-latency cells `latency` (`--measure latency`), none in an older file.
//! Schema 3 → 4: `loaded_latency`, an empty list (no older run measured it).
//! Schema 3 → 4: each cell's and failed cell's `op`, and `grid.ops`: an older file ran the
//! triad alone.

use super::lands::landing;
use super::lines::machine_topology;
use super::model::{CellSnapshot, CycleSource, Snapshot};
use crate::base::time::as_rfc3339;
use crate::judge::stats::{NoiseInputs, noisy_reasons};
use serde_json::{Map, Value, json};

/// The versions `from_json` reads: the current one and those `upgrade` converts.
pub(crate) const READABLE: [u64; 4] = [1, 2, 3, 4];

/// Brings a parsed snapshot of `version` up to the current schema, in place.
pub(crate) fn upgrade(version: u64, tree: &mut Value) {
    if version == 1 {
        one_to_two(tree);
    }
    if version <= 2 {
        two_to_three(tree);
    }
    if version <= 3 {
        three_to_four(tree);
    }
}

/// Schema 3 → 4: each addition of schema 4 brings its own part.
fn three_to_four(tree: &mut Value) {
    if let Some(root) = tree.as_object_mut() {
        root.insert("schema_version".into(), json!(4));
        v3_to_v4_latency(root);
        v3_to_v4_loaded_latency(root);
    }
    v3_to_v4_op(tree);
}

/// Schema 4's `latency`: a file from before `--measure latency` measured no latency.
fn v3_to_v4_latency(root: &mut Map<String, Value>) {
    root.entry("latency").or_insert_with(|| json!([]));
}

/// `loaded_latency`: no run before schema 4 measured it.
fn v3_to_v4_loaded_latency(root: &mut Map<String, Value>) {
    root.entry("loaded_latency").or_insert_with(|| json!([]));
}

/// The op of schema 4: every cell and failed cell of an older file is a triad cell, and its
/// grid the triad's alone.
fn v3_to_v4_op(tree: &mut Value) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    if let Some(grid) = root.get_mut("grid").and_then(Value::as_object_mut) {
        grid.insert("ops".into(), json!(["triad"]));
    }
    for list in ["cells", "failed"] {
        if let Some(cells) = root.get_mut(list).and_then(Value::as_array_mut) {
            for cell in cells.iter_mut().filter_map(Value::as_object_mut) {
                cell.insert("op".into(), json!("triad"));
            }
        }
    }
}

/// Schema 2 → 3: a cell's `repetitions`, the one repetition a run before `--repeat` was: its
/// median.
fn two_to_three(tree: &mut Value) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    root.insert("schema_version".into(), json!(3));
    if let Some(cells) = root.get_mut("cells").and_then(Value::as_array_mut) {
        for cell in cells.iter_mut().filter_map(Value::as_object_mut) {
            let median = cell
                .get("figures")
                .and_then(|f| f.get("median_gbs"))
                .cloned()
                .unwrap_or(Value::Null);
            cell.insert("repetitions".into(), json!([median]));
        }
    }
}

/// What schema 2 holds that schema 1 did not, worked out from the rest of the file once it is
/// read: where each explicit size lands, why a cell is noisy, where bytes/cycle's cycles came
/// from.
pub(crate) fn complete(version: u64, snapshot: &mut Snapshot) {
    if version < 2 {
        let topo = machine_topology(&snapshot.info.topology);
        for set in snapshot.grid.sets.iter_mut().filter(|s| s.level.is_none()) {
            set.lands_in = landing(set.size, &topo).map(|l| l.level);
        }
        let cpus = snapshot.info.topology.cpus.len();
        for cell in &mut snapshot.cells {
            cell.figures.noisy = noisy(cell, cpus);
            let f = &mut cell.figures;
            if f.bytes_per_cycle.is_some() && f.bytes_per_cycle_from.is_none() {
                f.bytes_per_cycle_from = Some(CycleSource::ClockEstimate);
            }
        }
    }
}

/// Why a schema-1 cell's figure cannot be trusted: the run's own rule over what the file
/// holds (every input is there), with `cpus` the machine's online CPUs.
fn noisy(cell: &CellSnapshot, cpus: usize) -> Vec<String> {
    let f = &cell.figures;
    noisy_reasons(&NoiseInputs {
        cv: f.cv,
        late_rounds: f.late_rounds,
        disturbed_rounds: f.disturbed_rounds,
        rounds: f.rounds,
        threads: cell.threads,
        cpus: (cpus > 0).then_some(cpus),
        steal: NoiseInputs::mean_share(cell.history.iter().map(|r| r.steal)),
        throttled: NoiseInputs::mean_share(cell.history.iter().map(|r| r.throttled)),
    })
}

fn one_to_two(tree: &mut Value) {
    let Some(root) = tree.as_object_mut() else {
        return;
    };
    root.insert("schema_version".into(), json!(2));
    rfc3339_at(root, "taken");
    if let Some(info) = root.get_mut("info").and_then(Value::as_object_mut) {
        rfc3339_at(info, "started");
        if let Some(duty) = info.get("duty").and_then(Value::as_f64) {
            info.insert("duty".into(), json!(duty / 100.0));
        }
        if let Some(vendor) = info.get_mut("vendor").and_then(Value::as_object_mut) {
            vendor_source(vendor);
        }
    }
    if let Some(sets) = root
        .get_mut("grid")
        .and_then(|g| g.get_mut("sets"))
        .and_then(Value::as_array_mut)
    {
        for set in sets {
            size_shape(set);
        }
    }
    if let Some(cells) = root.get_mut("cells").and_then(Value::as_array_mut) {
        for cell in cells {
            size_shape(cell);
            let groups = cell.get_mut("groups").and_then(Value::as_array_mut);
            for group in groups.into_iter().flatten() {
                group_shape(group);
            }
        }
    }
    if let Some(episodes) = root.get_mut("contention").and_then(Value::as_array_mut) {
        for episode in episodes.iter_mut().filter_map(Value::as_object_mut) {
            rfc3339_at(episode, "start");
            rfc3339_at(episode, "end");
            let suspects = episode.get_mut("suspects").and_then(Value::as_array_mut);
            for suspect in suspects.into_iter().flatten() {
                if let Some(s) = suspect.as_object_mut() {
                    percent_to_cores(s, "cpu_before_pct", "cpu_before_cores");
                    percent_to_cores(s, "cpu_pct", "cpu_cores");
                }
            }
        }
    }
}

/// A percentage of one core under `from` as cores under `to`.
fn percent_to_cores(object: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(pct) = object.remove(from).as_ref().and_then(Value::as_f64) {
        object.insert(to.into(), json!(pct / 100.0));
    }
}

fn rfc3339_at(object: &mut Map<String, Value>, key: &str) {
    if let Some(text) = object.get(key).and_then(Value::as_str) {
        let converted = as_rfc3339(text);
        object.insert(key.into(), Value::String(converted));
    }
}

/// The key and value of an object with exactly one entry: schema 1's way of naming a kind.
fn only_entry(value: &Value) -> Option<(String, Value)> {
    value
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
}

/// `{"per_thread": 8192}` → `{"kind": "per_thread", "bytes": 8192}` under `size`.
fn size_shape(holder: &mut Value) {
    let Some(size) = holder.get_mut("size") else {
        return;
    };
    let Some((kind, bytes)) = only_entry(size) else {
        return;
    };
    *size = json!({ "kind": kind, "bytes": bytes });
}

/// `{"node": 3}` → `{"kind": "node", "node": 3, "core_type": null}` under `group`, and
/// `{"core_type": "efficiency"}` likewise.
fn group_shape(holder: &mut Value) {
    let Some(key) = holder.get_mut("group") else {
        return;
    };
    let Some((kind, value)) = only_entry(key) else {
        return;
    };
    let mut shaped = json!({ "kind": kind, "node": null, "core_type": null });
    shaped[kind.as_str()] = value;
    *key = shaped;
}

/// Schema 1 said where the figure came from in words only; the words are the ones the machine
/// module wrote: `--vendor-gbs`, `SMBIOS: …`, or why there was none.
fn vendor_source(vendor: &mut Map<String, Value>) {
    let Some(text) = vendor
        .get("source")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let known = vendor.get("gbs").is_some_and(|g| !g.is_null());
    let kind = if !known {
        "none"
    } else if text.starts_with("SMBIOS") {
        "smbios"
    } else if text.starts_with("Apple's published figure") {
        "table"
    } else {
        "flag"
    };
    vendor.insert("source".into(), json!(kind));
    vendor.insert("source_text".into(), Value::String(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_1_groups_take_one_shape() {
        let mut tree = json!({
            "schema_version": 1,
            "cells": [{"groups": [
                {"group": {"node": 3}, "threads": 2, "gbs": 24.0, "per_thread_gbs": 12.0},
                {"group": {"core_type": "efficiency"}, "threads": 2, "gbs": 12.0,
                 "per_thread_gbs": 6.0}
            ]}]
        });
        upgrade(1, &mut tree);
        let groups = &tree["cells"][0]["groups"];
        assert_eq!(
            groups[0]["group"],
            json!({"kind": "node", "node": 3, "core_type": null})
        );
        assert_eq!(
            groups[1]["group"],
            json!({"kind": "core_type", "node": null, "core_type": "efficiency"})
        );
        assert_eq!(groups[1]["per_thread_gbs"], 6.0);
    }

    #[test]
    fn schema_3_cells_become_triad_cells() {
        let mut tree = json!({
            "schema_version": 3,
            "grid": {"sets": [], "threads": [1, 2]},
            "cells": [{"set": 0, "threads": 1}, {"set": 0, "threads": 2}],
            "failed": [{"set": 1, "threads": 1, "reason": "no room"}]
        });
        upgrade(3, &mut tree);
        assert_eq!(tree["schema_version"], 4);
        assert_eq!(tree["grid"]["ops"], json!(["triad"]));
        for c in tree["cells"].as_array().unwrap() {
            assert_eq!(c["op"], "triad");
        }
        assert_eq!(tree["failed"][0]["op"], "triad");
    }

    #[test]
    fn schema_1_episodes_get_rfc3339_times_and_cores() {
        let mut tree = json!({
            "schema_version": 1,
            "taken": "2026-01-02 03:04:05",
            "info": {"duty": 50, "vendor": {"gbs": 40.0, "source": "--vendor-gbs"}},
            "contention": [{
                "start": "2026-01-02 03:00:00",
                "end": null,
                "suspects": [{"cpu_before_pct": 12.0, "cpu_pct": 180.0}]
            }]
        });
        upgrade(1, &mut tree);
        assert_eq!(tree["schema_version"], 4, "through 2 and 3 to 4");
        assert_eq!(
            tree["latency"],
            json!([]),
            "schema 4's latency: none measured"
        );
        assert_eq!(tree["loaded_latency"], json!([]));
        assert_eq!(tree["taken"], "2026-01-02T03:04:05+00:00");
        assert_eq!(tree["info"]["duty"], 0.5);
        assert_eq!(tree["info"]["vendor"]["source"], "flag");
        assert_eq!(tree["info"]["vendor"]["source_text"], "--vendor-gbs");
        let e = &tree["contention"][0];
        assert_eq!(e["start"], "2026-01-02T03:00:00+00:00");
        assert!(e["end"].is_null());
        assert_eq!(e["suspects"][0]["cpu_before_cores"], 0.12);
        assert_eq!(e["suspects"][0]["cpu_cores"], 1.8);
        assert!(e["suspects"][0].get("cpu_pct").is_none());
    }
}
