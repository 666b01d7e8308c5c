//! The fleet: hardware fingerprints read from fixture trees (SMBIOS type-17 raw structures,
//! DMI ids, EDAC counters, kernel settings; `tests/fixtures/fingerprint/make.py` writes them),
//! and `stream-top fleet` judging many nodes' snapshots.

use std::path::{Path, PathBuf};
use stream_top::machine::fingerprint::{self, Fingerprint, Known};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fingerprint")
        .join(name)
}

fn read(name: &str) -> Fingerprint {
    fingerprint::read(&fixture(name), name, "Fixture CPU", 2)
}

#[test]
fn a_server_with_one_empty_slot_lists_sixteen_slots_and_fifteen_dimms() {
    let f = read("server-16-one-empty");
    let dimms = f.dimms.value().unwrap();
    assert_eq!(dimms.len(), 16);
    assert_eq!(f.populated().unwrap().len(), 15);
    assert!(!dimms[11].populated());
    assert_eq!(dimms[0].locator, "P0_DIMM_A1");
    assert_eq!((dimms[0].size_mib, dimms[0].rank), (Some(32768), Some(2)));
    assert_eq!(dimms[0].memory_type, "DDR5");
    assert_eq!(f.channels(), Some(15));
    // 15 channels × 4800 MT/s × 8 B.
    assert_eq!(f.peak_gbs(), Some(576.0));
    assert_eq!(f.memory_errors(), Some((0, 0)));
}

#[test]
fn firmware_and_kernel_settings_are_read() {
    let f = read("server-16-one-empty");
    let bios = f.bios.value().unwrap();
    assert_eq!(
        (bios.vendor.as_str(), bios.version.as_str()),
        ("Fixture Inc.", "2.1.0")
    );
    assert_eq!(bios.date, "03/14/2025");
    assert_eq!(f.microcode, Known::Value("0x2b000603".into()));
    assert_eq!(f.kernel_release, Known::Value("6.8.0-45-generic".into()));
    assert_eq!(f.thp, Known::Value("madvise".into()));
    assert_eq!(f.governor, Known::Value("performance".into()));
    assert_eq!(f.boost, Known::Value(true));
    assert_eq!(f.zone_reclaim_mode, Known::Value(0));
    assert_eq!(f.numa_balancing, Known::Value(1));
    assert_eq!(
        f.machine_id,
        Known::Value("server-16-one-empty-0123456789abcdef".into())
    );
}

#[test]
fn a_slow_dimm_and_corrected_errors_are_seen_and_keep_the_class() {
    let slow = read("server-slow-dimm");
    let dimms = slow.dimms.value().unwrap();
    assert_eq!(dimms[5].configured_mts, Some(4400));
    assert_eq!(dimms[5].rated_mts, Some(4800));
    assert_eq!(slow.memory_errors(), Some((412, 0)));
    // Both servers are built to be the same machine: a missing or slowed module does not
    // make a node a class of its own, or it would never be judged against its peers.
    assert_eq!(slow.class(), read("server-16-one-empty").class());
    assert_eq!(slow.class().len(), 8);
}

#[test]
fn a_desktop_is_a_class_of_its_own() {
    let d = read("desktop");
    assert_eq!(d.populated().unwrap().len(), 2);
    assert_eq!(d.peak_gbs(), Some(51.2));
    assert_eq!(d.governor, Known::Value("powersave".into()));
    assert_ne!(d.class(), read("server-16-one-empty").class());
}

#[test]
fn a_vm_without_smbios_says_why_for_every_missing_field() {
    let f = read("vm");
    assert!(matches!(&f.dimms, Known::Missing(w) if w.contains("/sys/firmware/dmi/entries")));
    assert!(matches!(&f.bios, Known::Missing(w) if w.contains("bios_vendor")));
    assert!(matches!(&f.microcode, Known::Missing(w) if w.contains("microcode")));
    assert!(matches!(&f.edac, Known::Missing(w) if w.contains("EDAC")));
    assert_eq!(f.thp, Known::Value("never".into()));
    assert_eq!(
        (f.channels(), f.peak_gbs(), f.memory_errors()),
        (None, None, None)
    );
    assert!(f.dimms.text(|_| String::new()).starts_with("– ("));
}

#[test]
fn a_fingerprint_survives_json() {
    let f = read("server-slow-dimm");
    let text = serde_json::to_string(&f).unwrap();
    assert_eq!(serde_json::from_str::<Fingerprint>(&text).unwrap(), f);
}

// ---- The fingerprint of a Mac: `sysctl` and `system_profiler SPMemoryDataType` ---------------

/// A label of the fingerprint's info series.
fn label(f: &Fingerprint, name: &str) -> String {
    f.labels().into_iter().find(|(n, _)| *n == name).unwrap().1
}

/// The reason a field is missing, if it is.
fn why<T>(k: &Known<T>) -> Option<String> {
    match k {
        Known::Missing(w) => Some(w.clone()),
        Known::Value(_) => None,
    }
}

/// Every reason a fingerprint gives for a field it lacks.
fn missing_reasons(f: &Fingerprint) -> Vec<String> {
    [
        why(&f.machine_id),
        why(&f.dimms),
        why(&f.bios),
        why(&f.microcode),
        why(&f.kernel_release),
        why(&f.thp),
        why(&f.governor),
        why(&f.boost),
        why(&f.zone_reclaim_mode),
        why(&f.numa_balancing),
        why(&f.edac),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[test]
fn an_apple_silicon_mac_lists_its_package_memory_and_says_what_macos_lacks() {
    let f = read("mac-m4-pro");
    // The brand and packages are sysctl's, whatever the topology passed.
    assert_eq!(
        (label(&f, "cpu"), label(&f, "sockets")),
        ("Apple M4 Pro".into(), "1".into())
    );
    assert_eq!(f.kernel_release, Known::Value("24.1.0".into()));
    let dimms = f.dimms.value().unwrap();
    assert_eq!(dimms.len(), 1);
    assert_eq!(dimms[0].locator, "Memory");
    assert_eq!(dimms[0].size_mib, Some(48 * 1024));
    assert_eq!(dimms[0].memory_type, "LPDDR5");
    // macOS gives no speed for package memory: no peak is made up.
    assert_eq!((dimms[0].speed(), f.peak_gbs()), (None, None));
    assert!(matches!(&f.edac, Known::Missing(w) if w == "macOS has no EDAC interface"));
    assert!(matches!(&f.microcode, Known::Missing(w) if w.contains("Apple silicon")));
    let reasons = missing_reasons(&f);
    assert_eq!(reasons.len(), 9, "{reasons:?}");
    for why in &reasons {
        assert!(why.contains("macOS"), "{why}");
        assert!(!why.contains("/sys") && !why.contains("/proc"), "{why}");
    }
}

#[test]
fn an_intel_mac_lists_every_slot_and_an_empty_one_is_not_populated() {
    let f = read("imac-2019");
    assert_eq!(label(&f, "cpu"), "Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz");
    assert_eq!(f.kernel_release, Known::Value("19.6.0".into()));
    // 222 as sysctl prints it, in hex as /proc/cpuinfo writes microcode.
    assert_eq!(f.microcode, Known::Value("0xde".into()));
    let dimms = f.dimms.value().unwrap();
    let locators: Vec<&str> = dimms.iter().map(|d| d.locator.as_str()).collect();
    assert_eq!(
        locators,
        [
            "BANK 0/ChannelA-DIMM0",
            "BANK 0/ChannelA-DIMM1",
            "BANK 1/ChannelB-DIMM0",
            "BANK 1/ChannelB-DIMM1"
        ]
    );
    assert_eq!(f.populated().unwrap().len(), 3);
    assert!(!dimms[3].populated() && dimms[3].speed().is_none());
    assert_eq!(
        (
            dimms[0].size_mib,
            dimms[0].memory_type.as_str(),
            dimms[0].speed()
        ),
        (Some(8192), "DDR4", Some(2667))
    );
    // 3 channels (one per populated DIMM, the model's assumption) × 2667 MT/s × 8 B.
    assert_eq!(f.peak_gbs(), Some(64.008));
    assert_ne!(f.class(), read("mac-m4-pro").class());
    for why in missing_reasons(&f) {
        assert!(why.contains("macOS"), "{why}");
    }
}

#[test]
fn a_mac_without_a_memory_listing_says_so_with_its_memory_size() {
    let tmp = scratch("mac-no-profile");
    std::fs::copy(
        fixture("mac-m4-pro").join("sysctl.txt"),
        tmp.path().join("sysctl.txt"),
    )
    .unwrap();
    let f = fingerprint::read(tmp.path(), "m", "Apple M4 Pro", 1);
    assert_eq!(
        f.dimms,
        Known::Missing(
            "system_profiler SPMemoryDataType gave no listing; hw.memsize says 49152 MiB in all"
                .into()
        )
    );
    assert!(fingerprint::parse_memory_profile("Memory:\n").is_empty());
}

// ---- `stream-top fleet` through the binary -------------------------------------------------

use crate::support::binary::{SMALL, run_binary};
use crate::support::report_fixtures::snapshot_a;
use stream_top::show::report::{Snapshot, to_json};

/// A directory of its own for one test (tests run in parallel), removed when it is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("stream-top-fleet-{name}-"))
        .tempdir()
        .unwrap()
}

/// The server fixture with every slot populated: what a healthy peer is.
fn healthy_server(node: &str) -> Fingerprint {
    let mut f = read("server-16-one-empty");
    if let Known::Value(d) = &mut f.dimms {
        d[11] = d[10].clone();
    }
    f.node = node.into();
    f.machine_id = Known::Value(format!("id-{node}"));
    f
}

/// A snapshot of `node` whose every cell runs at `share` of the fixture's figures.
fn node_snapshot(mut f: Fingerprint, node: &str, share: f64) -> Snapshot {
    let mut s = snapshot_a();
    f.node = node.into();
    f.machine_id = Known::Value(format!("id-{node}"));
    s.info.fingerprint = Some(f);
    for c in &mut s.cells {
        c.repetitions = vec![c.figures.median_gbs * share];
    }
    s
}

fn write(dir: &Path, s: &Snapshot, name: &str) {
    std::fs::write(dir.join(format!("{name}.json")), to_json(s)).unwrap();
}

/// The snapshot as if its run started `seconds` after 10:00 on 1 December 2026 and was taken
/// 30 s later.
fn taken_at(mut s: Snapshot, seconds: u32) -> Snapshot {
    let time = |t: u32| {
        format!(
            "2026-12-01T{:02}:{:02}:{:02}+00:00",
            10 + t / 3600,
            t / 60 % 60,
            t % 60
        )
    };
    s.info.started = time(seconds);
    s.taken = time(seconds + 30);
    s
}

/// `node`'s runs at `share` of the fixture's figures, one per start time (seconds after 10:00),
/// each written as `NODE-N.json`.
fn runs_of(dir: &Path, f: Fingerprint, node: &str, share: f64, starts: &[u32]) {
    for (i, &t) in starts.iter().enumerate() {
        let s = taken_at(node_snapshot(f.clone(), node, share), t);
        let file: String = node
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        write(dir, &s, &format!("{file}-{i}"));
    }
}

const HOUR: u32 = 3600;

/// Three start times an hour apart: enough occasions to accuse a node.
const THREE_HOURS: [u32; 3] = [0, HOUR, 2 * HOUR];

/// Eight servers: six healthy within 0.3 % of each other, one missing a DIMM at −30 %, one
/// with a slowed DIMM and corrected errors at −12 %.
fn eight_servers() -> tempfile::TempDir {
    let tmp = scratch("eight");
    let dir = tmp.path();
    for i in 1..=6 {
        let node = format!("node-0{i}");
        let share = 1.0 + 0.001 * (i as f64 - 3.5);
        write(
            dir,
            &node_snapshot(healthy_server(&node), &node, share),
            &node,
        );
    }
    // Both slow nodes were measured three times, an hour apart: slow every time, they are
    // outliers.
    runs_of(
        dir,
        read("server-16-one-empty"),
        "node-07",
        0.70,
        &THREE_HOURS,
    );
    runs_of(dir, read("server-slow-dimm"), "node-08", 0.88, &THREE_HOURS);
    tmp
}

#[test]
fn fleet_names_the_slow_nodes_and_what_differs_in_their_fingerprints() {
    let tmp = eight_servers();
    let dir = tmp.path().to_path_buf();
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let summary = out.lines().next().unwrap();
    assert!(
        summary.starts_with("8 nodes in 1 class; 2 outliers: node-07 "),
        "{summary}"
    );
    assert!(
        summary.contains("−30 % (15 of 16 DIMMs populated (peers: 16))"),
        "{summary}"
    );
    assert!(
        summary.contains("DIMM P0_DIMM_F1 at 4400 MT/s (peers: 4800)"),
        "{summary}"
    );
    assert!(summary.contains("412 corrected memory errors"), "{summary}");
    assert!(out.contains("by more than 6 median absolute deviations and by more than 5 %"));
    assert!(out.contains("on every one of 3 or more occasions (runs at least 10 minutes"));
    assert!(out.contains("| node-07 | "), "{out}");
}

#[test]
fn fail_on_outlier_exits_1_and_scripts_get_json_and_csv() {
    let tmp = eight_servers();
    let dir = tmp.path().to_path_buf();
    let d = dir.to_str().unwrap();
    assert_eq!(run_binary(&["fleet", "--fail-on-outlier", d]).0, 1);
    let (code, json, _) = run_binary(&["fleet", "--format", "json", d]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["classes"][0]["outliers"].as_array().unwrap().len(), 2);
    let (_, csv, _) = run_binary(&["fleet", "--format", "csv", d]);
    assert!(csv.starts_with(
        "class,op,set,threads,node,gbs,runs,median_gbs,mad_gbs,ratio,mads,outlier,why,suspect,\
         occasions,detectable_pct\n"
    ));
    assert!(csv.contains(",node-07,") && csv.contains(",true,"));
    // A class whose nodes differ by noise alone flags nobody: the 5 % rule holds them.
    let quiet_dir = scratch("quiet");
    let quiet = quiet_dir.path().to_path_buf();
    for i in 1..=6 {
        let node = format!("q-{i}");
        let share = 1.0 + 0.004 * (i as f64 - 3.5);
        write(
            &quiet,
            &node_snapshot(healthy_server(&node), &node, share),
            &node,
        );
    }
    let (code, out, _) = run_binary(&["fleet", "--fail-on-outlier", quiet.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("6 nodes in 1 class; 0 outliers; detectable: a node ≥ "),
        "{out}"
    );
}

/// Six healthy servers, one run each within 0.3 % of each other, and `node-07` missing a
/// DIMM at −30 % in runs started at `starts` (seconds after 10:00).
fn six_and_a_slow_one(name: &str, starts: &[u32]) -> tempfile::TempDir {
    let tmp = scratch(name);
    for i in 1..=6 {
        let node = format!("node-0{i}");
        let share = 1.0 + 0.001 * (i as f64 - 3.5);
        runs_of(tmp.path(), healthy_server(&node), &node, share, &[0]);
    }
    runs_of(
        tmp.path(),
        read("server-16-one-empty"),
        "node-07",
        0.70,
        starts,
    );
    tmp
}

#[test]
fn one_slow_run_makes_a_suspect_to_run_again_not_an_outlier() {
    let tmp = six_and_a_slow_one("one-slow", &[0]);
    let d = tmp.path().to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", "--fail-on-outlier", d]);
    assert_eq!(code, 0, "{out}{err}");
    let summary = out.lines().next().unwrap();
    assert!(
        summary.starts_with(
            "7 nodes in 1 class; 0 outliers; 1 suspect (run again at another time): node-07; \
             detectable: a node ≥ 5 % below its class"
        ),
        "{summary}"
    );
    assert!(
        out.contains(
            "### Suspects: slow, but not on every one of 3 or more occasions; not accused"
        ),
        "{out}"
    );
    let line = out.lines().find(|l| l.starts_with("- node-07: ")).unwrap();
    assert!(
        line.contains("15 of 16 DIMMs populated (peers: 16)"),
        "{line}"
    );
    assert!(
        line.contains("Run again at another time (10 minutes or more"),
        "{line}"
    );
    // The exact command the run was taken with, to take it again.
    let again = &snapshot_a().info.command_line;
    assert!(line.ends_with(&format!("`{again}`")), "{line}");
    assert!(out.contains("suspect (slow on 1 of 1 occasions)"), "{out}");
    // Suspects fail only when asked, with their own exit code.
    assert_eq!(run_binary(&["fleet", "--fail-on-suspect", d]).0, 3);
    let both = run_binary(&["fleet", "--fail-on-outlier", "--fail-on-suspect", d]);
    assert_eq!(both.0, 3);
    let (_, json, _) = run_binary(&["fleet", "--format", "json", d]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["classes"][0]["outliers"].as_array().unwrap().len(), 0);
    assert_eq!(v["classes"][0]["suspects"][0]["node"], "node-07");
    let (_, csv, _) = run_binary(&["fleet", "--format", "csv", d]);
    let row = csv.lines().find(|l| l.contains(",node-07,")).unwrap();
    assert!(
        row.contains(",false,") && row.ends_with(",true,1,5.0"),
        "{row}"
    );
}

#[test]
fn three_slow_runs_an_hour_apart_make_an_outlier() {
    let tmp = six_and_a_slow_one("three-apart", &THREE_HOURS);
    let d = tmp.path().to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", "--fail-on-outlier", d]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with("7 nodes in 1 class; 1 outlier: node-07 triad "),
        "{out}"
    );
    assert!(!out.contains("### Suspects"), "{out}");
    assert!(
        out.contains("| node-07 | ") && out.contains("| **yes** |"),
        "{out}"
    );
}

#[test]
fn two_slow_runs_an_hour_apart_are_a_suspect_still() {
    let tmp = six_and_a_slow_one("two-apart", &[0, HOUR]);
    let d = tmp.path().to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", "--fail-on-outlier", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("; 0 outliers; 1 suspect (run again"), "{out}");
    assert!(out.contains("suspect (slow on 2 of 2 occasions)"), "{out}");
}

#[test]
fn two_slow_runs_within_one_minute_are_one_burst_and_make_a_suspect() {
    let tmp = six_and_a_slow_one("one-burst", &[0, 40]);
    let d = tmp.path().to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", "--fail-on-outlier", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("; 0 outliers; 1 suspect (run again"), "{out}");
    assert!(out.contains("suspect (slow on 1 of 1 occasions)"), "{out}");
    assert_eq!(run_binary(&["fleet", "--fail-on-suspect", d]).0, 3);
}

/// Six healthy nodes of two runs an hour apart, their runs `spread` either side of the
/// median, and `node-07` 15 % down in each of its three runs.
fn a_class_spread_by(name: &str, spread: f64) -> tempfile::TempDir {
    let tmp = scratch(name);
    for i in 1..=6 {
        let node = format!("node-0{i}");
        for (k, sign) in [1.0, -1.0].into_iter().enumerate() {
            let share = 1.0 + sign * spread;
            let s = taken_at(
                node_snapshot(healthy_server(&node), &node, share),
                k as u32 * HOUR,
            );
            write(tmp.path(), &s, &format!("{node}-{k}"));
        }
    }
    runs_of(
        tmp.path(),
        read("server-16-one-empty"),
        "node-07",
        0.85,
        &THREE_HOURS,
    );
    tmp
}

/// The summary's "detectable: a node ≥ X % below its class", X.
fn detectable(summary: &str) -> f64 {
    let rest = summary.split("detectable: a node ≥ ").nth(1).unwrap();
    rest.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn a_tight_class_finds_a_node_fifteen_percent_down_and_a_noisy_one_says_it_cannot() {
    let tight = a_class_spread_by("tight", 0.002);
    let (code, out, _) =
        run_binary(&["fleet", "--fail-on-outlier", tight.path().to_str().unwrap()]);
    let summary = out.lines().next().unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(summary.contains("1 outlier: node-07 "), "{summary}");
    assert_eq!(detectable(summary), 5.0, "{summary}");
    // Runs 8 % either side of their node's median: a spread of 16 / √2 = 11.3 %, a least gap
    // of 4 × that. A node 15 % down is within the noise: not accused, not even suspected.
    let noisy = a_class_spread_by("noisy", 0.08);
    let (code, out, _) =
        run_binary(&["fleet", "--fail-on-outlier", noisy.path().to_str().unwrap()]);
    let summary = out.lines().next().unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        summary.contains("; 0 outliers; detectable: a node ≥ "),
        "{summary}"
    );
    assert_eq!(detectable(summary), 45.0, "{summary}");
    assert!(
        out.contains("run-to-run spread 11.3 % (7 nodes), least gap 45.3 %"),
        "{out}"
    );
}

#[test]
fn repetitions_of_a_node_merge_and_a_node_alone_in_its_class_is_not_judged() {
    let tmp = scratch("alone");
    let dir = tmp.path().to_path_buf();
    for (i, share) in [1.0, 0.99, 1.01].into_iter().enumerate() {
        let s = node_snapshot(healthy_server("a"), "a", share);
        write(&dir, &s, &format!("a-{i}"));
    }
    write(&dir, &node_snapshot(healthy_server("b"), "b", 1.0), "b");
    write(&dir, &node_snapshot(read("desktop"), "desk", 0.1), "desk");
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("3 nodes in 2 classes; 0 outliers; detectable: a node ≥ 5 % below"),
        "{out}"
    );
    assert!(out.contains("desk: alone in class"), "{out}");
    assert!(out.contains("| a | ") && out.contains("| 3 | "), "{out}");
}

#[test]
fn two_machines_claiming_one_name_are_flagged_not_merged() {
    let tmp = scratch("clash");
    let dir = tmp.path().to_path_buf();
    let mut one = node_snapshot(healthy_server("x"), "node-09", 1.0);
    write(&dir, &one, "one");
    if let Some(f) = &mut one.info.fingerprint {
        f.machine_id = Known::Value("another machine".into());
    }
    write(&dir, &one, "two");
    let (_, out, _) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert!(out.contains("Name clash: node-09 is claimed by 2 different machines (kept apart)."));
    assert!(out.contains("| node-09 [machine 1] |") && out.contains("| node-09 [machine 2] |"));
}

/// A host's snapshot from before the fingerprint was stored beside its new ones: one host is
/// one node, and the old snapshot's figures join it.
#[test]
fn a_snapshot_without_a_fingerprint_joins_the_node_of_its_host() {
    let tmp = scratch("old-beside-new");
    let dir = tmp.path().to_path_buf();
    let old = snapshot_a();
    let host = old.info.hostname.clone();
    assert!(old.info.fingerprint.is_none());
    write(&dir, &old, "old");
    for i in 0..2 {
        write(
            &dir,
            &node_snapshot(healthy_server(&host), &host, 1.0),
            &format!("new-{i}"),
        );
    }
    write(
        &dir,
        &node_snapshot(healthy_server("peer"), "peer", 1.0),
        "peer",
    );
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("2 nodes in 1 class; 0 outliers;"), "{out}");
    let row = format!("| {host} | ");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(&row)).collect();
    assert!(!rows.is_empty(), "{out}");
    // Each table lists the host once, with the old snapshot's repetition pooled in (3 runs).
    let tables = out.lines().filter(|l| l.starts_with("| node |")).count();
    assert_eq!(rows.len(), tables, "{out}");
    assert!(rows.iter().all(|r| r.contains(" | 3 | ")), "{out}");
    // Where two machines claim the name, the old snapshot cannot be placed: left out, said why.
    let mut other = node_snapshot(healthy_server(&host), &host, 1.0);
    if let Some(f) = &mut other.info.fingerprint {
        f.machine_id = Known::Value("another machine".into());
    }
    write(&dir, &other, "other");
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("| {host} [machine 2] |")), "{out}");
    assert!(!out.contains(&format!("| {host} [machine 3] |")), "{out}");
    assert!(
        out.contains("old.json left out: a snapshot without a fingerprint, so which of its 2 machines ran it is unknown"),
        "{out}"
    );
}

#[test]
fn fleet_refuses_what_it_cannot_read_and_rules_that_mean_nothing() {
    let (code, _, err) = run_binary(&["fleet", "/nonexistent/x.json"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    let tmp = eight_servers();
    let dir = tmp.path().to_path_buf();
    let (code, _, err) = run_binary(&["fleet", "--mads", "0", dir.to_str().unwrap()]);
    assert_eq!(
        (code, err.trim()),
        (
            2,
            "stream-top: fleet: --mads 0: must be a number above 0 and at most 100"
        )
    );
    // A rule no node could break, or every node would: each refused in one line.
    for (flag, value) in [
        ("--min-gap", "1000"),
        ("--min-gap", "0"),
        ("--min-gap", "-5"),
        ("--min-gap", "100"),
        ("--mads", "1e9"),
        ("--mads", "nan"),
    ] {
        let (code, out, err) = run_binary(&["fleet", flag, value, dir.to_str().unwrap()]);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert_eq!(err.lines().count(), 1, "{flag} {value}: {err}");
        assert!(err.contains(flag), "{flag} {value}: {err}");
        assert!(out.is_empty(), "{flag} {value}: {out}");
    }
    let (code, _, err) = run_binary(&["fleet", "--threads", "2", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_real_run_stores_its_node_name_and_fingerprint_and_older_snapshots_read_without_one() {
    let tmp = scratch("real");
    let dir = tmp.path().to_path_buf();
    for node in ["real-1", "real-2"] {
        let mut args = SMALL.to_vec();
        args.extend(["--format", "json", "--node", node]);
        let (code, json, err) = run_binary(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["info"]["fingerprint"]["node"], node);
        std::fs::write(dir.join(format!("{node}.json")), json).unwrap();
    }
    // A snapshot from before the fingerprint: judged under its hostname, in a class of its own.
    write(&dir, &snapshot_a(), "old");
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("3 nodes in 2 classes"), "{out}");
    assert!(
        out.contains("| real-1 |") && out.contains("| real-2 |"),
        "{out}"
    );
}

#[test]
fn the_info_series_carries_the_class_and_the_readable_fields() {
    let f = read("server-16-one-empty");
    let labels = f.labels();
    let get = |k: &str| labels.iter().find(|(n, _)| *n == k).unwrap().1.clone();
    assert_eq!(get("class"), f.class());
    assert_eq!(
        (get("dimms"), get("dimm_mts")),
        ("15 of 16".into(), "4800".into())
    );
    assert_eq!(
        (get("bios"), get("thp")),
        ("2.1.0".into(), "madvise".into())
    );
    let vm = read("vm").labels();
    assert!(vm.contains(&("dimms", "–".into())) && vm.contains(&("bios", "–".into())));

    let tmp = scratch("prom");
    let dir = tmp.path().to_path_buf();
    let prom = dir.join("node.prom");
    let mut args = SMALL.to_vec();
    args.extend(["--node", "node-42", "--prom-file", prom.to_str().unwrap()]);
    let (code, _, err) = run_binary(&args);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(
        text.contains("# TYPE stream_top_machine_info gauge"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.starts_with("stream_top_machine_info{"))
        .unwrap();
    assert!(
        line.contains(r#"node="node-42""#) && line.contains("class=\""),
        "{line}"
    );
    assert!(line.ends_with("} 1"), "{line}");
}

/// The repository's root, where deploy/ is.
fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_slurm_array_job_writes_one_snapshot_per_node_for_fleet() {
    let tmp = scratch("slurm");
    let dir = tmp.path().to_path_buf();
    for node in ["cn-001", "cn-002"] {
        let out = std::process::Command::new("bash")
            .arg(repo().join("deploy/slurm/fleet.sbatch"))
            .env("STREAM_TOP", crate::support::binary::BIN)
            .env("SNAPSHOTS", &dir)
            .env("SLURMD_NODENAME", node)
            // A small grid: the command line is the one a node runs, on less memory.
            .env("SETS", "16KiB/thread")
            .env("THREADS", "1")
            .env("REPEAT", "1")
            .env("ROUNDS", "3")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Each run's files carry its start time: two per node, none overwritten.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    for (name, node, tail) in [
        (&names[0], "cn-001-", "Z-latency.json"),
        (&names[1], "cn-001-", "Z.json"),
        (&names[2], "cn-002-", "Z-latency.json"),
        (&names[3], "cn-002-", "Z.json"),
    ] {
        assert!(name.starts_with(node) && name.ends_with(tail), "{names:?}");
    }
    let (code, out, err) = run_binary(&["fleet", "--fail-on-outlier", dir.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.starts_with("2 nodes in 1 class;"), "{out}");
    assert!(
        out.contains("| cn-001 |") && out.contains("| cn-002 |"),
        "{out}"
    );
}

#[test]
fn the_kubernetes_job_and_daemonset_name_the_node_from_the_downward_api() {
    let job = std::fs::read_to_string(repo().join("deploy/kubernetes/fleet-job.yaml")).unwrap();
    let line = job
        .lines()
        .map(str::trim)
        .find_map(|l| {
            l.strip_prefix("- ")
                .filter(|l| l.contains("stream-top --headless"))
        })
        .expect("the job's command line");
    assert!(job.contains("fieldPath: spec.nodeName"));
    let tmp = scratch("k8s");
    let dir = tmp.path().to_path_buf();
    // The job's command line as the pod's shell runs it, on a small grid and a scratch volume.
    let small = "--sets 16KiB/thread --threads 1 --rounds 3 --round-ms 2";
    assert!(line.contains("--sets dram --repeat 3"), "{line}");
    let command = line
        .replace("--sets dram --repeat 3", small)
        .replace(
            "--measure latency --sets dram",
            "--measure latency --sets 16KiB/thread",
        )
        .replace("/snapshots", dir.to_str().unwrap());
    let bin_dir = Path::new(crate::support::binary::BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &command])
        .env("PATH", path)
        .env("NODE_NAME", "worker-3")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One run's own files, named by the node and the run's start time, nothing left over.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    let run = names[0]
        .strip_suffix("-latency.json")
        .expect("the latency file");
    assert_eq!(names[1], format!("{run}.json"), "{names:?}");
    let time = run
        .strip_prefix("worker-3-")
        .expect("the node's name first");
    assert!(
        time.len() == 16 && time.ends_with('Z'),
        "{time}: YYYYMMDDTHHMMSSZ"
    );
    let snap = std::fs::read_to_string(dir.join(&names[1])).unwrap();
    let v: serde_json::Value = serde_json::from_str(&snap).unwrap();
    assert_eq!(v["info"]["fingerprint"]["node"], "worker-3");
    let ds = std::fs::read_to_string(repo().join("deploy/kubernetes/daemonset.yaml")).unwrap();
    assert!(ds.contains(r#""--node", "$(NODE_NAME)""#) && ds.contains("fieldPath: spec.nodeName"));
}

/// The tag a `podman build -f deploy/Containerfile` line of the Containerfile's comments gives,
/// for the stage it names with `--target` (None: the default, last stage).
fn containerfile_tag(containerfile: &str, stage: Option<&str>) -> String {
    containerfile
        .lines()
        .filter_map(|l| {
            l.trim_start_matches('#')
                .trim()
                .strip_prefix("podman build ")
        })
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|words| {
            let target = words.iter().position(|w| *w == "--target");
            target.map(|i| words[i + 1]) == stage
        })
        .and_then(|words| {
            let i = words.iter().position(|w| *w == "-t")?;
            Some(words[i + 1].to_string())
        })
        .unwrap_or_else(|| panic!("no podman build line for stage {stage:?}"))
}

/// The value of every `key: value` line of a manifest.
fn yaml_values<'a>(yaml: &'a str, key: &str) -> Vec<&'a str> {
    yaml.lines()
        .filter_map(|l| l.trim().strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
        .collect()
}

#[test]
fn the_kubernetes_manifests_run_the_images_the_containerfile_builds_as_non_root() {
    let cf = std::fs::read_to_string(repo().join("deploy/Containerfile")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let service = containerfile_tag(&cf, None);
    let fleet = containerfile_tag(&cf, Some("fleet"));
    // The tags follow Cargo.toml's version, so a release renames both images.
    assert!(service.ends_with(&format!(":{version}")), "{service}");
    assert_eq!(fleet, format!("{service}-fleet"));
    assert!(
        cf.lines()
            .any(|l| l.starts_with("FROM ") && l.ends_with(" AS fleet"))
    );
    // Each image's user is a numeric one that is not root, and the pods run as it.
    let users: Vec<&str> = cf.lines().filter_map(|l| l.strip_prefix("USER ")).collect();
    assert_eq!(users, ["65534:65534", "65534:65534"], "{cf}");
    for (file, image) in [("daemonset.yaml", &service), ("fleet-job.yaml", &fleet)] {
        let yaml = std::fs::read_to_string(repo().join("deploy/kubernetes").join(file)).unwrap();
        assert_eq!(yaml_values(&yaml, "image"), [image.as_str()], "{file}");
        assert!(
            yaml.contains(&format!("-t {image} .")),
            "{file} says how its image is built"
        );
        assert_eq!(yaml_values(&yaml, "runAsNonRoot"), ["true"], "{file}");
        assert_eq!(yaml_values(&yaml, "runAsUser"), ["65534"], "{file}");
        assert_eq!(
            yaml_values(&yaml, "readOnlyRootFilesystem"),
            ["true"],
            "{file}"
        );
    }
}

// ---- `fleet --svg DIR`: a chart per class ---------------------------------------------------

/// `#RRGGBB`, as plotters writes a fill.
fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The charts in `dir` (file names, sorted) and the text of the only one.
fn only_chart(dir: &Path) -> (Vec<String>, String) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 1, "{names:?}");
    let text = std::fs::read_to_string(dir.join(&names[0])).unwrap();
    (names, text)
}

/// The filled circles of one colour.
fn circles(doc: &roxmltree::Document, colour: plotters::style::RGBColor) -> usize {
    doc.descendants()
        .filter(|n| n.has_tag_name("circle") && n.attribute("fill") == Some(&hex(colour)))
        .count()
}

fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn the_svg_of_a_class_holds_a_point_per_node_and_cell_and_names_its_outliers() {
    use stream_top::show::report::svg::palette;
    let tmp = eight_servers();
    let snaps = tmp.path().to_str().unwrap().to_string();
    let charts = scratch("charts");
    // Made when missing: only the last component, as `--export` makes its directory.
    let out_dir = charts.path().join("svg");
    let d = out_dir.to_str().unwrap();
    let (code, out, err) = run_binary(&["fleet", "--svg", d, &snaps]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("8 nodes in 1 class; 2 outliers"), "{out}");
    let (names, svg) = only_chart(&out_dir);
    let class = out
        .lines()
        .find_map(|l| l.strip_prefix("## Class "))
        .unwrap();
    let class = class.split(' ').next().unwrap();
    assert_eq!(names, vec![format!("class-{class}.svg")]);
    assert!(
        err.contains(&format!("stream-top: wrote {d}/class-{class}.svg")),
        "{err}"
    );
    let doc = roxmltree::Document::parse(&svg).expect("the chart is well-formed XML");
    // Six cells (the fixture's grid), eight nodes: six healthy nodes in blue, the two outliers
    // in red in every cell; each colour once more in the legend.
    assert_eq!(circles(&doc, palette::L1), 6 * 6 + 1);
    assert_eq!(circles(&doc, palette::FAILED), 2 * 6 + 1);
    let texts = texts(&doc);
    for outlier in ["node-07", "node-08"] {
        assert_eq!(
            texts.iter().filter(|t| *t == outlier).count(),
            6,
            "{outlier}"
        );
    }
    assert!(
        !texts.iter().any(|t| t == "node-01"),
        "only outliers are named"
    );
    let title = &texts[0];
    assert!(
        title.starts_with(&format!("Fleet class {class} — ")),
        "{title}"
    );
    assert!(title.ends_with("8 nodes, 2 outliers"), "{title}");
    assert!(
        texts[1].contains("more than 6 MADs and by more than 5 %"),
        "{}",
        texts[1]
    );
    assert!(texts.iter().any(|t| t == "triad dram × 4"), "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("node-07: 15 of 16 DIMMs populated")),
        "{texts:?}"
    );
    // The threshold is dashed in every row: plotters draws each dash as a line of its own.
    let dashes = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("polyline") && n.attribute("stroke") == Some(&hex(palette::VENDOR))
        })
        .count();
    assert!(dashes >= 6, "{dashes} dashes");
    // A second run replaces the chart; no temporary file is left beside it.
    let (code, _, err) = run_binary(&["fleet", "--svg", d, "--mads", "4", &snaps]);
    assert_eq!(code, 0, "{err}");
    let (_, again) = only_chart(&out_dir);
    assert!(again.contains("more than 4 MADs"));
}

#[test]
fn node_names_in_the_svg_are_escaped() {
    let tmp = scratch("escape");
    let dir = tmp.path().to_path_buf();
    for i in 1..=4 {
        let node = format!("ok-{i}");
        write(
            &dir,
            &node_snapshot(healthy_server(&node), &node, 1.0),
            &node,
        );
    }
    let odd = r#"<b>&"slow"'</b>"#;
    // Slow three times an hour apart: an outlier, whom the chart names.
    runs_of(&dir, healthy_server(odd), odd, 0.5, &THREE_HOURS);
    let charts = scratch("escape-svg");
    let d = charts.path().to_str().unwrap();
    let (code, _, err) = run_binary(&["fleet", "--svg", d, dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, svg) = only_chart(charts.path());
    assert!(!svg.contains("<b>"), "a name is text, never markup");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed with the odd name in it");
    assert!(texts(&doc).iter().any(|t| t == odd));
}

#[test]
fn snapshots_without_a_fingerprint_are_charted_as_class_none() {
    let tmp = scratch("svg-none");
    let dir = tmp.path().to_path_buf();
    for host in ["old-1", "old-2"] {
        let mut s = snapshot_a();
        s.info.fingerprint = None;
        s.info.hostname = host.into();
        write(&dir, &s, host);
    }
    let charts = scratch("svg-none-out");
    let d = charts.path().to_str().unwrap();
    let (code, _, err) = run_binary(&["fleet", "--svg", d, dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (names, svg) = only_chart(charts.path());
    assert_eq!(names, vec!["class-none.svg".to_string()]);
    assert!(roxmltree::Document::parse(&svg).is_ok());
}

#[test]
fn a_bad_svg_directory_is_refused_in_one_line_before_anything_is_judged() {
    let tmp = eight_servers();
    let snaps = tmp.path().to_str().unwrap().to_string();
    let file = tmp.path().join("node-01.json");
    for bad in ["/nonexistent/parent/svg", file.to_str().unwrap()] {
        let (code, out, err) = run_binary(&["fleet", "--svg", bad, &snaps]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("stream-top: --svg {bad}: ")),
            "{err}"
        );
        assert!(out.is_empty(), "nothing judged or printed: {out}");
    }
}

// ---- `stream-top check` --------------------------------------------------------------------

/// The online CPUs, as check counts its threads.
fn cpus() -> String {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .to_string()
}

#[test]
fn check_says_ok_or_slow_in_one_line_with_exit_0_or_1() {
    let small = ["--set", "16KiB/thread"];
    let (code, out, err) = run_binary(&[&["check", "--min-gbs", "0.001"], &small[..]].concat());
    crate::support::binary::assert_ok_unless_contended(code, &out, &err);
    assert!(
        out.contains(": 16 KiB/thread × ") && out.lines().count() == 1,
        "{out}"
    );
    let (code, out, _) = run_binary(&[&["check", "--min-gbs", "1e12"], &small[..]].concat());
    assert_eq!(code, 1);
    assert!(
        out.starts_with("SLOW: ") && out.contains("< 1000000000000 --min-gbs"),
        "{out}"
    );
}

#[test]
fn check_exits_2_when_it_cannot_check_before_measuring() {
    let (code, _, err) = run_binary(&["check"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run_binary(&["check", "--against", "/nonexistent/ref.json"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
    // A snapshot without the cell check measures: no reference, not a verdict.
    let tmp = scratch("check-nocell");
    let dir = tmp.path().to_path_buf();
    write(&dir, &snapshot_a(), "a");
    let a = dir.join("a.json");
    let (code, _, err) = run_binary(&[
        "check",
        "--set",
        "16KiB/thread",
        "--against",
        a.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("has no triad 16 KiB/thread × "), "{err}");
}

#[test]
fn check_reads_the_class_reference_that_fleet_exports() {
    let tmp = scratch("check-ref");
    let dir = tmp.path().to_path_buf();
    let threads = cpus();
    for node in ["r-1", "r-2"] {
        let (code, json, err) = run_binary(&[
            "--headless",
            "--threads",
            &threads,
            "--sets",
            "16KiB/thread",
            "--rounds",
            "3",
            "--round-ms",
            "2",
            "--format",
            "json",
            "--node",
            node,
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::write(dir.join(format!("{node}.json")), json).unwrap();
    }
    // Beside the snapshots, not among them: a scratch directory of its own, removed with it.
    let out_dir = scratch("check-ref-out");
    let reference = out_dir.path().join("reference.json");
    let r = reference.to_str().unwrap();
    let (code, _, err) = run_binary(&["fleet", "--export-reference", r, dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run_binary(&["check", "--set", "16KiB/thread", "--against", r]);
    // This shared machine's speed varies: the verdict may go any way (ok, SLOW, UNSURE), the
    // line may not.
    assert!([0, 1, 3].contains(&code), "{err}");
    assert!(
        out.contains(" × class ") && out.contains(" reference, latency "),
        "{out}"
    );
}

#[test]
fn the_slurm_prolog_runs_check_and_passes_its_exit_code_on() {
    let run = |check: &str| {
        std::process::Command::new("sh")
            .arg(repo().join("deploy/slurm/prolog.sh"))
            .env("STREAM_TOP", crate::support::binary::BIN)
            .env("STREAM_TOP_CHECK", check)
            .output()
            .unwrap()
    };
    let ok = run("--min-gbs 0.001 --set 16KiB/thread");
    crate::support::binary::assert_ok_unless_contended(
        ok.status.code().unwrap_or(-1),
        &String::from_utf8_lossy(&ok.stdout),
        &String::from_utf8_lossy(&ok.stderr),
    );
    let slow = run("--min-gbs 1e12 --set 16KiB/thread");
    assert_eq!(slow.status.code(), Some(1));
    let prolog = std::fs::read_to_string(repo().join("deploy/slurm/prolog.sh")).unwrap();
    assert!(
        prolog.contains("check ${STREAM_TOP_CHECK:---against /shared/stream-top/reference.json}")
    );
}

/// One snapshot is one run: a file holding one cell many times is not a snapshot stream-top
/// wrote, and is refused naming the file and the copy, not counted as that many runs.
#[test]
fn a_snapshot_holding_one_cell_many_times_is_refused_not_counted_as_runs() {
    let tmp = eight_servers();
    let dir = tmp.path();
    let mut s = node_snapshot(healthy_server("copies"), "copies", 1.0);
    let first = s.cells[0].clone();
    s.cells = vec![first; 1000];
    write(dir, &s, "copies");
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("copies.json: not a valid stream-top snapshot: cells[1] repeats cells[0]"),
        "{err}"
    );
}

/// A `*.json` entry of a fleet directory that is no regular file (a FIFO, a device, a symlink
/// loop) is said on stderr in one line, and the rest judged.
#[test]
fn entries_that_are_no_snapshot_file_are_said_not_skipped_in_silence() {
    let tmp = eight_servers();
    let dir = tmp.path();
    let ok = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.json"))
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::os::unix::fs::symlink("/dev/null", dir.join("null.json")).unwrap();
    std::os::unix::fs::symlink("loop.json", dir.join("loop.json")).unwrap();
    let (code, out, err) = run_binary(&["fleet", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("8 nodes"), "{out}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(said.len(), 1, "{err}");
    for what in [
        "skipped 3 entries",
        "pipe.json (a FIFO)",
        "null.json (a character device)",
        "loop.json (",
    ] {
        assert!(said[0].contains(what), "{what}: {err}");
    }
}
