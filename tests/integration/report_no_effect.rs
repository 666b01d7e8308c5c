//! Settings that change nothing on a machine are said once, beside the table and in the
//! exports: spread and compact pinning that place the threads on the same CPUs, `--huge-pages`
//! where transparent huge pages are `never`. Found on the fixture machines, and end to end.

use crate::support::machine_fixtures::fixture;
use crate::support::report_fixtures::*;
use std::process::Command;
use stream_top::judge::no_effect::{Setting, huge_pages_note, pin_note};
use stream_top::machine::thp::ThpMode;
use stream_top::machine::topology::{PinPolicy, Topology};
use stream_top::show::report::model as wire;
use stream_top::show::report::to_markdown;

fn pin_note_on(machine: &str, pin: PinPolicy, threads: &[usize]) -> Option<String> {
    let topo = Topology::read(&fixture(machine)).unwrap();
    pin_note(pin, |p| topo.cpu_order(p), threads).map(|n| {
        assert_eq!(n.setting, Setting::Pin);
        n.text
    })
}

#[test]
fn spread_and_compact_are_the_same_on_two_cores_without_smt() {
    let text = pin_note_on("vm-2core", PinPolicy::Compact, &[1, 2]).expect("a note");
    assert_eq!(
        text,
        "--pin compact changes nothing here: compact and spread place the threads on the same \
         CPUs at every thread count of this run (2 threads: CPUs 0-1)"
    );
    assert!(pin_note_on("vm-2core", PinPolicy::Spread, &[1, 2]).is_some());
    assert!(pin_note_on("vm-2core", PinPolicy::None, &[1, 2]).is_none());
}

#[test]
fn spread_and_compact_differ_with_smt_or_two_sockets() {
    // Compact puts a second thread on the first core's sibling (laptop) or the same socket
    // (server); spread does not.
    assert!(pin_note_on("laptop-hybrid", PinPolicy::Spread, &[1, 2]).is_none());
    assert!(pin_note_on("server-2s", PinPolicy::Compact, &[1, 2, 64]).is_none());
    // One thread lands on CPU 0 both ways, and all 64 fill the machine both ways.
    assert!(pin_note_on("server-2s", PinPolicy::Spread, &[1, 64]).is_some());
}

#[test]
fn huge_pages_change_nothing_where_thp_is_never() {
    let thp = |machine| ThpMode::read(&fixture(machine));
    assert_eq!(thp("server-2s"), Some(ThpMode::Never));
    assert_eq!(thp("vm-2core"), Some(ThpMode::Madvise));
    assert_eq!(thp("laptop-hybrid"), Some(ThpMode::Always));
    let note = huge_pages_note(
        stream_top::engine::plan::HugePages::On,
        thp("server-2s"),
        None,
    )
    .expect("a note");
    assert_eq!(note.setting, Setting::HugePages);
    assert!(
        note.text
            .starts_with("--huge-pages on changes nothing here")
    );
    assert!(note.text.contains("`never`"), "{}", note.text);
    assert!(
        huge_pages_note(
            stream_top::engine::plan::HugePages::On,
            thp("vm-2core"),
            None
        )
        .is_none()
    );
    assert!(
        huge_pages_note(
            stream_top::engine::plan::HugePages::Off,
            thp("laptop-hybrid"),
            None
        )
        .is_none()
    );
}

#[test]
fn the_note_stands_once_right_above_the_table() {
    let mut snap = snapshot_a();
    snap.info.no_effect = vec![wire::NoEffect {
        setting: wire::Setting::Pin,
        text: "--pin spread changes nothing here: because".into(),
    }];
    let md = to_markdown(&snap);
    assert_eq!(md.matches("changes nothing here").count(), 1, "{md}");
    let note = md
        .find("Note: --pin spread changes nothing here: because.")
        .unwrap();
    let table = md.find("| per array").unwrap();
    assert!(note < table);
    // Nothing but blank lines between the note and the table.
    assert!(md[note..table].lines().skip(1).all(|l| l.is_empty()));
}

/// A one-cell headless run on a fixture machine's sysfs and /proc.
fn headless_on(machine: &str, extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--threads", "1", "--sets", "16KiB/thread"])
        .args([
            "--rounds",
            "2",
            "--round-ms",
            "1",
            "--format",
            "json",
            "--root",
        ])
        .arg(fixture(machine))
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_run_on_a_fixture_machine_keeps_its_notes_in_the_json() {
    let v = headless_on("server-2s", &["--huge-pages", "on", "--pin", "none"]);
    let notes = v["info"]["no_effect"].as_array().expect("no_effect");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["setting"], "huge_pages");
    let v = headless_on("vm-2core", &["--pin", "compact"]);
    let notes = v["info"]["no_effect"].as_array().expect("no_effect");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["setting"], "pin");
}
