//! `--web-config` through the binary: TLS, client certificates, basic auth, headers, reload,
//! and every bad file refused at start. The certificates are made here (rcgen), never kept;
//! the client is `curl`, and in one test a real Prometheus (CI has both: .ci/run); without
//! them the tests that scrape are skipped with the reason printed.

use crate::support::fail_common::assert_refused_early;
use crate::support::prometheus::{BANDWIDTH_QUERY, Prometheus, have_prometheus};
use crate::support::serve::{PATIENCE, QUICK, Service};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A certificate authority of the test's own.
struct Authority {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Authority {
    fn new(name: &str) -> Authority {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let pem = params.self_signed(&key).unwrap().pem();
        Authority {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A leaf for `names` (IP addresses become IP SANs): its certificate and key, PEM.
    fn leaf(&self, names: &[&str]) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// Writes its certificate and a leaf's as `{name}-ca.pem`, `{name}.pem`, `{name}-key.pem`.
    fn write_leaf(&self, dir: &Path, name: &str, names: &[&str]) {
        let (cert, key) = self.leaf(names);
        write(&dir.join(format!("{name}-ca.pem")), &self.pem);
        write(&dir.join(format!("{name}.pem")), &cert);
        write(&dir.join(format!("{name}-key.pem")), &key);
    }
}

/// Writes through a new file and a rename, as a certificate rotation does.
fn write(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Whether `curl` can be run; false (with the reason printed) only outside CI.
fn have_curl() -> bool {
    crate::support::tools::have("curl", "apt-get install curl; .ci/run installs it")
}

/// What curl got: its exit code, the status code, the response head and body.
struct Got {
    exit: i32,
    status: String,
    text: String,
}

/// `curl` with `args` on `url` (`/metrics` of the service): a bounded wait.
fn curl(svc: &Service, scheme: &str, args: &[&str]) -> Got {
    let url = format!("{scheme}://{}/metrics", svc.addr);
    let out = Command::new("curl")
        .args(["-sS", "-i", "--max-time", "30"])
        .args(args)
        .arg(&url)
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Got {
        exit: out.status.code().unwrap_or(-1),
        status: text.lines().next().unwrap_or("").to_string(),
        text: format!("{text}\n{}", String::from_utf8_lossy(&out.stderr)),
    }
}

fn https(svc: &Service, dir: &Path, ca: &str, args: &[&str]) -> Got {
    let ca = dir.join(ca).display().to_string();
    let mut all = vec!["--cacert", &ca];
    all.extend_from_slice(args);
    curl(svc, "https", &all)
}

fn service(config: &Path) -> Service {
    let config = config.display().to_string();
    let mut args = QUICK.to_vec();
    args.extend(["--web-config", &config]);
    Service::start(&args)
}

/// A config file in `dir` (the paths in it relative to `dir`).
fn config(dir: &Path, yaml: &str) -> PathBuf {
    let path = dir.join("web.yml");
    write(&path, yaml);
    path
}

const SERVER_TLS: &str =
    "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n";

#[test]
fn tls_basic_auth_and_headers() {
    if !have_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    Authority::new("test CA").write_leaf(dir.path(), "server", &["127.0.0.1"]);
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let path = config(
        dir.path(),
        &format!(
            "{SERVER_TLS}basic_auth_users:\n  prom: {hash}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\n"
        ),
    );
    let svc = service(&path);
    let ok = https(&svc, dir.path(), "server-ca.pem", &["-u", "prom:s3cret"]);
    assert!(ok.status.contains(" 200"), "{}", ok.text);
    assert!(
        ok.text.contains("# TYPE stream_top_info gauge"),
        "{}",
        ok.text
    );
    assert!(ok.text.contains("X-Frame-Options: deny"), "{}", ok.text);
    assert!(
        ok.text
            .contains("Strict-Transport-Security: max-age=31536000"),
        "{}",
        ok.text
    );
    assert!(
        ok.text
            .contains("stream_top_web_config_last_reload_success 1"),
        "{}",
        ok.text
    );
    // Again: now from the cache of verified credentials.
    let again = https(&svc, dir.path(), "server-ca.pem", &["-u", "prom:s3cret"]);
    assert!(again.status.contains(" 200"), "{}", again.text);
    for who in [&[][..], &["-u", "prom:wrong"], &["-u", "nobody:s3cret"]] {
        let no = https(&svc, dir.path(), "server-ca.pem", who);
        assert!(no.status.contains(" 401"), "{who:?}: {}", no.text);
        assert!(
            no.text.contains("WWW-Authenticate: Basic"),
            "{who:?}: {}",
            no.text
        );
        assert!(no.text.contains("X-Frame-Options: deny"), "{}", no.text);
        assert!(!no.text.contains("stream_top_info"), "{}", no.text);
    }
    // Plain HTTP to the TLS port gets no answer.
    let plain = curl(&svc, "http", &["-u", "prom:s3cret"]);
    assert!(
        plain.exit != 0 && !plain.text.contains("stream_top_info"),
        "{}",
        plain.text
    );
    // A certificate the client does not trust is refused by the client.
    let other = tempfile::tempdir().unwrap();
    Authority::new("other CA").write_leaf(other.path(), "x", &["127.0.0.1"]);
    let untrusted = https(&svc, other.path(), "x-ca.pem", &["-u", "prom:s3cret"]);
    assert_ne!(untrusted.exit, 0, "{}", untrusted.text);
}

#[test]
fn client_certificates_are_verified_in_the_handshake() {
    if !have_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    Authority::new("server CA").write_leaf(d, "server", &["127.0.0.1"]);
    Authority::new("client CA").write_leaf(d, "client", &["scraper"]);
    Authority::new("wrong CA").write_leaf(d, "wrong", &["scraper"]);
    let path = config(
        d,
        &format!(
            "{SERVER_TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client-ca.pem\n  min_version: TLS13\n"
        ),
    );
    let svc = service(&path);
    let cert = |name: &str| {
        vec![
            "--cert".to_string(),
            d.join(format!("{name}.pem")).display().to_string(),
            "--key".to_string(),
            d.join(format!("{name}-key.pem")).display().to_string(),
        ]
    };
    let none = https(&svc, d, "server-ca.pem", &[]);
    assert!(
        none.exit != 0 && !none.text.contains("stream_top_info"),
        "{}",
        none.text
    );
    let wrong = cert("wrong");
    let wrong = https(
        &svc,
        d,
        "server-ca.pem",
        &wrong.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(
        wrong.exit != 0 && !wrong.text.contains("stream_top_info"),
        "{}",
        wrong.text
    );
    let right = cert("client");
    let right = https(
        &svc,
        d,
        "server-ca.pem",
        &right.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(right.status.contains(" 200"), "{}", right.text);
    // min_version TLS13: a TLS 1.2 client is refused.
    let right = cert("client");
    let mut old: Vec<&str> = right.iter().map(String::as_str).collect();
    old.extend(["--tlsv1.2", "--tls-max", "1.2"]);
    let old = https(&svc, d, "server-ca.pem", &old);
    assert_ne!(old.exit, 0, "{}", old.text);
}

/// A Prometheus scrape job for `svc` over TLS with a client certificate and basic auth.
fn tls_job(name: &str, svc: &Service, d: &Path, password: &str) -> String {
    let file = |f: &str| d.join(f).display().to_string();
    format!(
        "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {}\n      cert_file: {}\n      key_file: {}\n    basic_auth:\n      username: prom\n      password: {password}\n    static_configs:\n      - targets: ['{}']\n",
        file("server-ca.pem"),
        file("client.pem"),
        file("client-key.pem"),
        svc.addr
    )
}

#[test]
fn prometheus_scrapes_over_tls_with_a_client_certificate_and_basic_auth() {
    if !have_prometheus() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    Authority::new("server CA").write_leaf(d, "server", &["127.0.0.1"]);
    Authority::new("client CA").write_leaf(d, "client", &["scraper"]);
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let path = config(
        d,
        &format!(
            "{SERVER_TLS}  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client-ca.pem\nbasic_auth_users:\n  prom: {hash}\n"
        ),
    );
    let svc = service(&path);
    let prometheus = Prometheus::start(&format!(
        "{}{}",
        tls_job("right", &svc, d, "s3cret"),
        tls_job("wrong-password", &svc, d, "wrong")
    ));
    let right = prometheus.wait_for_target("right");
    assert_eq!(right["health"], "up", "{right}");
    assert_eq!(right["scrapeUrl"], format!("https://{}/metrics", svc.addr));
    let first = prometheus.wait_for_query(BANDWIDTH_QUERY);
    let value: f64 = first["value"][1].as_str().unwrap().parse().unwrap();
    assert!(value > 0.0, "{first}");
    assert_eq!(first["metric"]["job"], "right", "{first}");
    let wrong = prometheus.wait_for_target("wrong-password");
    assert_eq!(wrong["health"], "down", "{wrong}");
    assert!(
        wrong["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("401")),
        "{wrong}"
    );
    drop(prometheus);
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
}

/// Scrapes with `ca` until `done` says the answer is the one awaited, within `PATIENCE`.
fn until(svc: &Service, dir: &Path, ca: &str, what: &str, done: impl Fn(&Got) -> bool) -> Got {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let got = https(svc, dir, ca, &[]);
        if done(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "{what}: {}", got.text);
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_rotated_certificate_is_served_without_a_restart_and_a_broken_file_keeps_it() {
    if !have_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    Authority::new("first CA").write_leaf(d, "server", &["127.0.0.1"]);
    std::fs::copy(d.join("server-ca.pem"), d.join("first-ca.pem")).unwrap();
    let path = config(d, SERVER_TLS);
    let svc = service(&path);
    let svc_url = svc.url.clone();
    let first = https(&svc, d, "first-ca.pem", &[]);
    assert!(first.status.contains(" 200"), "{}", first.text);
    // Rotate: a certificate from another authority, under the same names.
    Authority::new("second CA").write_leaf(d, "server", &["127.0.0.1"]);
    let second = until(&svc, d, "server-ca.pem", "the new certificate", |g| {
        g.status.contains(" 200")
    });
    assert!(
        second.text.contains("last_reload_success 1"),
        "{}",
        second.text
    );
    let stale = https(&svc, d, "first-ca.pem", &[]);
    assert_ne!(
        stale.exit, 0,
        "the old certificate is still served: {}",
        stale.text
    );
    // A broken file: the second certificate is still served, and the metric says so.
    write(
        &path,
        "tls_server_config:\n  cert_file: server.pem\n  keyfile: x\n",
    );
    let kept = until(&svc, d, "server-ca.pem", "the failed reload", |g| {
        g.text.contains("last_reload_success 0")
    });
    assert!(kept.status.contains(" 200"), "{}", kept.text);
    let (_, _, stderr) = svc.terminate();
    assert!(
        stderr.contains("unknown field `keyfile`") && stderr.contains("kept the previous config"),
        "{stderr}"
    );
    // The start line gives the scheme a scraper must use.
    assert!(svc_url.starts_with("https://127.0.0.1:"), "{svc_url}");
}

#[test]
fn bad_web_configs_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ca = Authority::new("test CA");
    ca.write_leaf(d, "server", &["127.0.0.1"]);
    ca.write_leaf(d, "other", &["127.0.0.1"]);
    let cases: [(&str, String, &str); 7] = [
        (
            "missing.yml",
            "tls_server_config:\n  cert_file: nowhere.pem\n  key_file: server-key.pem\n".into(),
            "nowhere.pem",
        ),
        (
            "mismatch.yml",
            "tls_server_config:\n  cert_file: server.pem\n  key_file: other-key.pem\n".into(),
            "server.pem and key_file",
        ),
        (
            "hash.yml",
            "basic_auth_users:\n  prom: $2y$10$notahash\n".into(),
            "prom: not a bcrypt hash",
        ),
        (
            "unknown.yml",
            "tls_server_config:\n  cert_file: server.pem\n  key_file: server-key.pem\n  ciphers: []\n"
                .into(),
            "unknown field `ciphers`",
        ),
        (
            "old.yml",
            format!("{SERVER_TLS}  min_version: TLS10\n"),
            "rustls has no TLS 1.0",
        ),
        (
            "suite.yml",
            format!("{SERVER_TLS}  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n"),
            "not offered by rustls",
        ),
        (
            "ca.yml",
            format!("{SERVER_TLS}  client_ca_file: server-ca.pem\n"),
            "client_ca_file without a client_auth_type",
        ),
    ];
    for (name, yaml, says) in cases {
        let path = d.join(name);
        write(&path, &yaml);
        let path = path.display().to_string();
        assert_refused_early(
            &[
                "--headless",
                "--serve",
                "127.0.0.1:0",
                "--web-config",
                &path,
            ],
            "--web-config",
            says,
        );
    }
    let path = d.join("hash.yml").display().to_string();
    assert_refused_early(
        &["--headless", "--web-config", &path],
        "--web-config",
        "only with --serve",
    );
}

/// A client TLS session that trusts `ca` (PEM) for the name 127.0.0.1.
fn tls_client(ca: &str) -> rustls::ClientConnection {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    // The provider the crate's features give: ring, as the server's.
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap()
}

fn connect(svc: &mut Service) -> std::net::TcpStream {
    std::net::TcpStream::connect_timeout(&svc.addr, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("connect: {e}; the service: {}", svc.state()))
}

#[test]
fn stalled_and_idle_tls_handshakes_do_not_shut_a_scrape_out() {
    use std::io::{Read, Write};
    if !have_curl() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    Authority::new("test CA").write_leaf(d, "server", &["127.0.0.1"]);
    let ca = std::fs::read_to_string(d.join("server-ca.pem")).unwrap();
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let path = config(
        d,
        &format!("{SERVER_TLS}basic_auth_users:\n  prom: {hash}\n"),
    );
    // 64 open files at most: the service holds 32 connections, so the hostile ones below fill
    // its table several times over and only its eviction of the oldest heads lets a scrape in.
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -n 64 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_stream-top"))
        .args(["--headless", "--serve", "127.0.0.1:0"])
        .args(QUICK)
        .args(["--web-config", &path.display().to_string()]);
    let mut svc = Service::spawn(command);
    // Half a ClientHello each, then nothing: handshakes that never finish.
    let mut hello = Vec::new();
    tls_client(&ca).write_tls(&mut hello).unwrap();
    let mut stalled: Vec<std::net::TcpStream> = (0..100)
        .map(|_| {
            let mut s = connect(&mut svc);
            s.write_all(&hello[..hello.len() / 2]).unwrap();
            s
        })
        .collect();
    // Handshakes that finish, and then no request.
    let idle: Vec<_> = (0..10)
        .map(|_| {
            let mut s = connect(&mut svc);
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut tls = tls_client(&ca);
            while tls.is_handshaking() {
                tls.complete_io(&mut s).unwrap();
            }
            (s, tls)
        })
        .collect();
    let ok = https(&svc, d, "server-ca.pem", &["-u", "prom:s3cret"]);
    assert!(ok.status.contains(" 200"), "{}", ok.text);
    assert!(
        ok.text.contains("# TYPE stream_top_info gauge"),
        "{}",
        ok.text
    );
    // The first stalled handshake was let go (its table slot or its deadline), not kept.
    stalled[0]
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    match stalled[0].read(&mut [0u8; 1]) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("a stalled handshake is still held: {other:?}"),
    }
    drop((stalled, idle));
    let (code, _, err) = svc.terminate();
    assert_eq!(code, Some(143), "{err}");
}
