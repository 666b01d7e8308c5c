//! End to end with a real Prometheus server on loopback: it scrapes
//! `stream-top --headless --serve 127.0.0.1:PORT`, and its HTTP API must then answer
//! `stream_top_bandwidth_bytes_per_second > 0`. Without Prometheus the test is skipped outside
//! CI (support/prometheus.rs).

use crate::support::prometheus::{BANDWIDTH_QUERY, Prometheus, have_prometheus};
use crate::support::serve::{QUICK, Service};

#[test]
fn prometheus_scrapes_the_service_and_answers_the_bandwidth_query() {
    if !have_prometheus() {
        return;
    }
    let svc = Service::start(QUICK);
    let prometheus = Prometheus::start(&format!(
        "  - job_name: stream-top\n    static_configs:\n      - targets: ['{}']\n",
        svc.addr
    ));
    let first = prometheus.wait_for_query(BANDWIDTH_QUERY);
    let value: f64 = first["value"][1].as_str().unwrap().parse().unwrap();
    assert!(value > 0.0, "{first}");
    assert_eq!(first["metric"]["job"], "stream-top");
    println!("Prometheus answered `stream_top_bandwidth_bytes_per_second > 0`: {first}");
    drop(prometheus);
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
}
