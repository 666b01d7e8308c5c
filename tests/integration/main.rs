//! The integration tests, one crate so they link once: a module per area. The tmux end-to-end
//! tests are tests/tui_e2e.rs, a crate of their own so nothing else runs beside them.
// A test's notes go to libtest, which captures them; the one-writer rule is the program's.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// A test's helpers may unwrap as its bodies do: a panic there is the failure report.
#![allow(clippy::unwrap_used)]

mod architecture;
mod cgroup_run;
mod check;
mod check_contention;
mod choices_from;
mod cli;
mod docs;
mod engine;
// The two that need the engine's test hooks (`cargo test --features test-hooks`).
#[cfg(feature = "test-hooks")]
mod engine_disturbed;
#[cfg(feature = "test-hooks")]
mod engine_panic;
mod escape_everywhere;
mod fail_early;
mod fail_files;
mod fail_inputs;
mod fail_partial;
mod fail_readme;
mod fail_streams;
mod fleet;
mod headless;
mod latency;
mod loaded_latency;
mod machine_cgroup;
mod machine_clock;
mod machine_cpu_limit;
mod machine_host;
mod machine_mac;
mod machine_procs;
mod machine_servers;
mod machine_topology;
mod machine_vendor;
mod numa;
mod prom_fleet;
mod record;
mod report_compare;
mod report_csv;
mod report_derived;
mod report_golden;
mod report_groups;
mod report_json;
mod report_latency;
mod report_markdown;
mod report_names;
mod report_no_effect;
mod report_numa;
mod report_ops;
mod report_port_limit;
mod report_svg;
mod report_svg_ops;
mod report_verdicts;
mod report_write;
mod rules;
mod serve;
mod serve_prometheus;
// TLS is in the Linux builds only (ring compiles C for its target).
#[cfg(target_os = "linux")]
mod serve_tls;
mod size_sweep;
mod support;
mod tui_app;
mod tui_big;
mod tui_contention;
mod tui_log;
mod tui_loop;
mod tui_numa;
mod tui_ops;
mod tui_probe;
mod tui_render;
mod tui_sweep;
mod tui_wording;
