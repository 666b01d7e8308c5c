//! The Prometheus rules in deploy/prometheus: `promtool check rules` and their unit tests
//! (`promtool test rules`), where promtool is installed (CI installs it, so there it must run).

use std::path::Path;
use std::process::Command;

/// `promtool ARGS` in deploy/prometheus; false (said) when promtool is missing outside CI.
fn promtool(args: &[&str]) -> bool {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus");
    let out = match Command::new("promtool")
        .args(args)
        .current_dir(&dir)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "promtool is not installed, but CI must have it (.ci/run installs prometheus): {e}"
            );
            eprintln!("promtool {} skipped: promtool is not installed", args[0]);
            return false;
        }
    };
    assert!(
        out.status.success(),
        "promtool {}: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn the_rules_are_valid_and_pass_their_unit_tests() {
    if promtool(&["check", "rules", "rules.yml"]) {
        promtool(&["test", "rules", "rules.test.yml"]);
    }
}

#[test]
fn every_alert_is_defined_and_has_a_test_that_fires_it() {
    let rules = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/rules.yml"),
    )
    .unwrap();
    let tests = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/prometheus/rules.test.yml"),
    )
    .unwrap();
    for alert in [
        "StreamTopCellBelowReference",
        "StreamTopCellContended",
        "StreamTopNodeOutlier",
        "StreamTopNodeBelowPeers",
        "StreamTopStale",
        "StreamTopChecksumFailure",
    ] {
        assert!(rules.contains(&format!("- alert: {alert}")), "{alert}");
        // Each alert has a unit test that expects it to fire.
        assert!(
            tests.contains(&format!(
                "alertname: {alert}\n        exp_alerts:\n          -"
            )),
            "no test fires {alert}"
        );
    }
}

#[test]
fn each_node_is_set_against_the_median_of_its_hardware_class() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = std::fs::read_to_string(root.join("deploy/prometheus/rules.yml")).unwrap();
    assert!(rules.contains("- record: stream_top:bandwidth:ratio_to_class_median"));
    // The class comes from the info series the exporter renders.
    let exposition = std::fs::read_to_string(root.join("src/show/serve/exposition.rs")).unwrap();
    assert!(
        rules.contains("stream_top_machine_info")
            && exposition.contains("\"stream_top_machine_info\"")
    );
    // The unit tests: a class of 6 with one node 30 % down fires; 6 within 3 % and a node
    // alone in its class stay silent.
    let tests = std::fs::read_to_string(root.join("deploy/prometheus/rules.test.yml")).unwrap();
    assert!(tests.contains("summary: \"node-6: triad dram x 64 at 70% of its class c3f2\""));
    assert!(tests.contains("A class of 6 nodes within 3 % of each other, and a node alone"));
}

#[test]
fn the_dashboard_marks_episodes_and_names_only_families_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("deploy/grafana/stream-top.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let exprs: Vec<&str> = dashboard["annotations"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["expr"].as_str())
        .collect();
    assert!(
        exprs.iter().any(|e| e.contains("stream_top_contended")),
        "{exprs:?}"
    );
    assert!(
        exprs
            .iter()
            .any(|e| e.contains("stream_top_contention_episodes_total")),
        "{exprs:?}"
    );
    // Every family the dashboard queries is one the exporter renders.
    let exposition = std::fs::read_to_string(root.join("src/show/serve/exposition.rs")).unwrap();
    for (i, _) in text.match_indices("stream_top_") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            exposition.contains(&format!("\"{name}\"")),
            "the dashboard queries {name}, which the exporter does not render"
        );
    }
}
