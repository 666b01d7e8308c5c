//! The integration tests, one crate so they link once: a module per area.

mod cgroup_run;
mod cli;
mod engine;
mod engine_panic;
mod headless;
mod machine_cgroup;
mod machine_clock;
mod machine_fixtures;
mod machine_host;
mod machine_topology;
mod machine_vendor;
mod report_compare;
mod report_csv;
mod report_derived;
mod report_fixtures;
mod report_json;
mod report_markdown;
mod report_svg;
mod report_write;
mod serve;
mod serve_prometheus;
mod tui_app;
mod tui_common;
mod tui_e2e;
mod tui_render;
