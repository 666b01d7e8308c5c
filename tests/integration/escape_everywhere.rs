//! A string read from a file reaches no terminal, Markdown table, CSV, SVG or drain reason
//! raw. Every string field of a snapshot (found by walking its JSON) is poisoned with an escape
//! sequence, a bell, a `|` and a newline, as far as the file still reads as a snapshot, and
//! every output of `fleet`, `compare` and `check` is searched for a control character and a
//! broken table.

use crate::support::binary::run_binary;
use crate::support::report_fixtures::snapshot_a;
use serde_json::Value;
use std::path::{Path, PathBuf};
use stream_top::machine::fingerprint::{self, Known};
use stream_top::show::report::{Snapshot, from_json, to_json};

/// What a hostile or damaged file puts in a string: a title change, a bell, a table's cell
/// end, a screen clear and a line break.
const POISON: &str = "\u{1b}]0;PWNED\u{7}|x\u{1b}[2J\n";

/// The JSON pointers of every string leaf under `v`.
fn string_leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(_) => out.push(at),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                string_leaves(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let key = k.replace('~', "~0").replace('/', "~1");
                string_leaves(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
}

fn poison_at(v: &mut Value, pointer: &str) {
    if let Some(Value::String(s)) = v.pointer_mut(pointer) {
        s.push_str(POISON);
    }
}

/// The string fields of `s` that still read as a snapshot when poisoned, each tried on its own
/// (an op's or a level's name that no longer parses is refused as a whole file, which is not
/// what this test is about), less those in `keep`.
fn poisonable(s: &Snapshot, keep: &[&str]) -> Vec<String> {
    let clean: Value = serde_json::from_str(&to_json(s)).unwrap();
    let mut leaves = Vec::new();
    string_leaves(&clean, String::new(), &mut leaves);
    leaves
        .into_iter()
        .filter(|p| !keep.contains(&p.as_str()))
        .filter(|p| {
            let mut v = clean.clone();
            poison_at(&mut v, p);
            from_json(&v.to_string(), Path::new("poisoned.json")).is_ok()
        })
        .collect()
}

/// `s` with every field in `fields` poisoned, as the text of a file.
fn poisoned(s: &Snapshot, fields: &[String]) -> String {
    let mut v: Value = serde_json::from_str(&to_json(s)).unwrap();
    for p in fields {
        poison_at(&mut v, p);
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// A node of the fingerprint fixture `fixture` at `share` of snapshot A's figures, its run
/// started `start` seconds after 10:00.
fn node(fixture: &str, name: &str, share: f64, start: u32) -> Snapshot {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fingerprint");
    let mut f = fingerprint::read(&root.join(fixture), fixture, "Fixture CPU", 2);
    f.node = name.into();
    f.machine_id = Known::Value(format!("id-{name}"));
    let mut s = snapshot_a();
    s.info.fingerprint = Some(f);
    s.info.hostname = name.into();
    for c in &mut s.cells {
        c.repetitions = vec![c.figures.median_gbs * share];
    }
    let time = |t: u32| {
        format!(
            "2026-12-01T{:02}:{:02}:{:02}+00:00",
            10 + t / 3600,
            t / 60 % 60,
            t % 60
        )
    };
    s.info.started = time(start);
    s.taken = time(start + 30);
    s
}

/// No control character but the line breaks between lines.
fn assert_printable(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: control characters {bad:?} in:\n{text}"
    );
    assert!(
        !text.contains("\u{1b}") && !text.contains("\u{7}"),
        "{what}"
    );
}

/// The `|` that end cells (not the escaped `\|` inside one).
fn cell_ends(line: &str) -> usize {
    line.match_indices('|')
        .filter(|(i, _)| !line[..*i].ends_with('\\'))
        .count()
}

/// Every row of every Markdown table has as many cells as its header.
fn assert_tables_whole(text: &str) {
    let mut header: Option<usize> = None;
    for line in text.lines() {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let ends = cell_ends(line);
        match header {
            None => header = Some(ends),
            Some(h) => assert_eq!(ends, h, "a row broke its table: {line}\n{text}"),
        }
    }
}

/// Six healthy nodes, one slow twice an hour apart (an outlier) and one slow once (a
/// suspect), every string field poisoned, the start times kept so that the occasions count.
fn poisoned_fleet(dir: &Path) -> Vec<PathBuf> {
    let keep = ["/info/started", "/taken"];
    let fields = poisonable(&node("server-16-one-empty", "n", 1.0, 0), &keep);
    for must in [
        "/info/hostname",
        "/info/fingerprint/node",
        "/info/topology/model",
    ] {
        assert!(
            fields.iter().any(|f| f == must),
            "{must} not poisoned: {fields:?}"
        );
    }
    assert!(
        fields.iter().any(|f| f.ends_with("/set_label")),
        "{fields:?}"
    );
    let mut runs = Vec::new();
    for i in 1..=6 {
        runs.push((
            format!("node-{i}"),
            "server-16-one-empty",
            1.0 + 0.001 * i as f64,
            0,
        ));
    }
    runs.push(("slow".into(), "server-slow-dimm", 0.7, 0));
    runs.push(("slow".into(), "server-slow-dimm", 0.7, 3600));
    runs.push(("slow".into(), "server-slow-dimm", 0.7, 7200));
    runs.push(("once".into(), "server-16-one-empty", 0.7, 0));
    let mut files = Vec::new();
    for (i, (name, fixture, share, start)) in runs.iter().enumerate() {
        let file = dir.join(format!("{i}.json"));
        std::fs::write(
            &file,
            poisoned(&node(fixture, name, *share, *start), &fields),
        )
        .unwrap();
        files.push(file);
    }
    files
}

#[test]
fn no_string_from_a_snapshot_reaches_fleets_outputs_raw() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    std::fs::create_dir(&dir).unwrap();
    poisoned_fleet(&dir);
    let d = dir.to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", d]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("PWNED") && out.contains("1 outlier"), "{out}");
    assert!(out.contains("suspect"), "{out}");
    assert_printable("fleet (Markdown)", &out);
    assert_printable("fleet's stderr", &err);
    assert_tables_whole(&out);
    let (code, csv, err) = run_binary(&["fleet", "--format", "csv", d]);
    assert_eq!(code, 0, "{err}");
    assert!(csv.contains("PWNED"), "{csv}");
    assert_printable("fleet --format csv", &csv);
    let (code, json, err) = run_binary(&["fleet", "--format", "json", d]);
    assert_eq!(code, 0, "{err}");
    assert_printable("fleet --format json", &json);
    let charts = tmp.path().join("charts");
    let (code, _, err) = run_binary(&["fleet", "--svg", charts.to_str().unwrap(), d]);
    assert_eq!(code, 0, "{err}");
    assert_printable("fleet --svg's stderr", &err);
    let mut drawn = 0;
    for entry in std::fs::read_dir(&charts).unwrap() {
        let svg = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("the chart is well-formed XML");
        let text: String = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(text.contains("PWNED"), "{svg}");
        assert_printable("fleet --svg", &text.replace(['\n', '\t', '\r'], " "));
        drawn += 1;
    }
    assert!(drawn > 0);
}

#[test]
fn no_string_from_a_snapshot_reaches_compares_header_table_or_gate_raw() {
    let tmp = tempfile::tempdir().unwrap();
    let files = poisoned_fleet(tmp.path());
    let (a, b) = (files[0].to_str().unwrap(), files[6].to_str().unwrap());
    let (code, out, err) = run_binary(&["compare", a, b]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("PWNED"), "{out}");
    assert_printable("compare", &out);
    assert_printable("compare's stderr", &err);
    assert_tables_whole(&out);
    // Single runs a side: the gate is refused, in one line that names the cells.
    let (code, out, err) = run_binary(&["compare", "--fail-if-slower", "5", a, b]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_printable("compare's gate refusal", &err);
}

/// check's verdict line is a scheduler's drain reason: against a class reference whose every
/// string but its class is poisoned, and far faster than this machine, it is one line of
/// printable text.
#[test]
fn checks_drain_reason_is_one_printable_line() {
    let tmp = tempfile::tempdir().unwrap();
    let snaps = tmp.path().join("snaps");
    std::fs::create_dir(&snaps).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = threads.to_string();
    let set = "16KiB/thread";
    for node in ["r-1", "r-2"] {
        let (code, json, err) = run_binary(&[
            "--headless",
            "--sets",
            set,
            "--format",
            "json",
            "--node",
            node,
            "--threads",
            &threads,
            "--rounds",
            "3",
            "--round-ms",
            "2",
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::write(snaps.join(format!("{node}.json")), json).unwrap();
    }
    let file = tmp.path().join("reference.json");
    let (code, _, err) = run_binary(&[
        "fleet",
        "--export-reference",
        file.to_str().unwrap(),
        snaps.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let mut reference: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut leaves = Vec::new();
    string_leaves(&reference, String::new(), &mut leaves);
    for p in leaves.iter().filter(|p| !p.ends_with("/class")) {
        // The cells' op and set are what check looks its cell up by: kept.
        if !p.contains("/cells/") {
            poison_at(&mut reference, p);
        }
    }
    for cell in reference[0]["cells"].as_array_mut().unwrap() {
        cell[3] = 9e4.into();
    }
    std::fs::write(&file, serde_json::to_string_pretty(&reference).unwrap()).unwrap();
    let (code, out, err) =
        run_binary(&["check", "--set", set, "--against", file.to_str().unwrap()]);
    assert!([1, 3].contains(&code), "{out}{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_printable("check's verdict line", &out);
    assert!(
        out.contains("PWNED"),
        "the reference's names are in the line: {out}"
    );
}

/// `--node` is the name fleet, the metrics and the drain reason show: a name that would act
/// in them, or none, or one longer than a DNS name, is refused in one line before measuring.
#[test]
fn node_names_that_would_act_or_are_empty_or_too_long_are_refused() {
    let long = "n".repeat(254);
    for bad in ["bad\u{1b}]0;PWNED\u{7}|x", "", "two\nlines", long.as_str()] {
        let (code, out, err) = run_binary(&["--headless", "--node", bad]);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
        assert!(err.starts_with("stream-top: --node "), "{err}");
        assert_printable("--node's refusal", &err);
        assert!(out.is_empty());
    }
}
