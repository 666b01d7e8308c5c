//! `--web-config FILE`: the endpoint's TLS, client certificates, basic auth and response
//! headers, in the format of the Prometheus exporter-toolkit (node_exporter's
//! `--web.config.file`), so one file serves both. The same keys and meanings; paths relative
//! to the file's directory. What this build cannot honour is refused in one line rather than
//! ignored: TLS 1.0 and 1.1 (rustls has neither), client certificates asked for but not
//! verified, inline certificates, a cipher suite or curve rustls does not offer. `http2` is
//! accepted and does nothing (the endpoint speaks HTTP/1.1, which every scraper speaks).
//!
//! [`WebConfig::load`] reads and checks everything (the YAML, the certificates and key, the
//! hashes), so a bad file is one line, exit 2, at start, and a bad new file on reload keeps the
//! old config.

use super::tls::{self, TlsFile};
use crate::base::error::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsFile>,
    http_server_config: Option<HttpFile>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
    /// exporter-toolkit's request rate limit: refused (not silently dropped).
    rate_limit: Option<serde_norway::Value>,
}

/// `http_server_config`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    /// Accepted and ignored: the endpoint speaks HTTP/1.1 only.
    #[allow(dead_code)]
    http2: Option<bool>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// The response headers exporter-toolkit lets a config set, and the values it allows for each
/// (None: any value).
const SETTABLE_HEADERS: [(&str, Option<&[&str]>); 5] = [
    ("Strict-Transport-Security", None),
    ("X-Content-Type-Options", Some(&["nosniff"])),
    ("X-Frame-Options", Some(&["deny", "sameorigin"])),
    ("X-XSS-Protection", None),
    ("Content-Security-Policy", None),
];

/// A checked config, ready to serve with.
#[derive(Debug, Clone)]
pub struct WebConfig {
    /// The file itself.
    pub(super) path: PathBuf,
    /// TLS, when `tls_server_config` names a certificate.
    pub(super) tls: Option<tls::Settings>,
    /// User name → bcrypt hash; empty: no basic auth.
    pub(super) users: BTreeMap<String, String>,
    /// Sent with every response, as `Name: value\r\n` lines.
    pub(super) headers: String,
    /// Every file the config depends on (itself, the certificate, key and CA), for reload.
    pub(super) files: Vec<PathBuf>,
}

impl WebConfig {
    /// Reads and checks `path`. Errors are one line naming the file, exit 2.
    pub fn load(path: &Path) -> Result<WebConfig> {
        let name = format!("--web-config {}", path.display());
        WebConfig::read(path).map_err(|e| e.context(&name))
    }

    fn read(path: &Path) -> Result<WebConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::usage(e.to_string()))?;
        let file: File = if text.trim().is_empty() {
            File::default()
        } else {
            serde_norway::from_str(&text).map_err(|e| Error::usage(one_line(&e.to_string())))?
        };
        if file.rate_limit.is_some() {
            return Err(Error::usage("rate_limit: not supported by stream-top"));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut files = vec![path.to_path_buf()];
        let tls = match &file.tls_server_config {
            Some(t) => {
                refuse_inline(t)?;
                tls::Settings::load(t, dir, &mut files)?
            }
            None => None,
        };
        for (user, hash) in &file.basic_auth_users {
            hash.parse::<bcrypt::HashParts>().map_err(|e| {
                Error::usage(format!("basic_auth_users: {user}: not a bcrypt hash ({e})"))
            })?;
        }
        let headers = file
            .http_server_config
            .map(|h| header_lines(&h.headers))
            .transpose()?
            .unwrap_or_default();
        Ok(WebConfig {
            path: path.to_path_buf(),
            tls,
            users: file.basic_auth_users,
            headers,
            files,
        })
    }
}

/// exporter-toolkit's inline `cert`, `key`, `client_ca` and `client_allowed_sans`: named in
/// the refusal, since a file meant for node_exporter may hold them.
fn refuse_inline(t: &TlsFile) -> Result<()> {
    let inline = [
        ("cert", &t.cert, "cert_file"),
        ("key", &t.key, "key_file"),
        ("client_ca", &t.client_ca, "client_ca_file"),
    ];
    if let Some((key, _, instead)) = inline.iter().find(|(_, v, _)| v.is_some()) {
        return Err(Error::usage(format!(
            "tls_server_config.{key}: inline PEM is not supported by stream-top: use {instead}"
        )));
    }
    if t.client_allowed_sans.is_some() {
        return Err(Error::usage(
            "tls_server_config.client_allowed_sans: not supported by stream-top",
        ));
    }
    Ok(())
}

/// `http_server_config.headers` as response header lines, refusing what exporter-toolkit
/// refuses (a header it does not let a config set, a value it does not allow) and any value
/// that would break the response (a line break).
fn header_lines(headers: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::new();
    for (name, value) in headers {
        let Some((canonical, allowed)) = SETTABLE_HEADERS
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case(name))
        else {
            return Err(Error::usage(format!(
                "http_server_config.headers: {name} cannot be set (only {})",
                SETTABLE_HEADERS.map(|(h, _)| h).join(", ")
            )));
        };
        if let Some(allowed) = allowed
            && !allowed.iter().any(|a| a.eq_ignore_ascii_case(value))
        {
            return Err(Error::usage(format!(
                "http_server_config.headers: {name}: {value:?} is not one of {}",
                allowed.join(", ")
            )));
        }
        if value.chars().any(|c| c.is_control()) {
            return Err(Error::usage(format!(
                "http_server_config.headers: {name}: a control character in the value"
            )));
        }
        out.push_str(&format!("{canonical}: {value}\r\n"));
    }
    Ok(out)
}

/// A parser's message on one line (serde_norway's can span several).
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<WebConfig> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.yml");
        std::fs::write(&path, text).unwrap();
        WebConfig::load(&path)
    }

    fn refusal(text: &str) -> String {
        let e = load(text).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let m = e.to_string();
        assert!(!m.contains('\n'), "{m}");
        m
    }

    #[test]
    fn basic_auth_and_headers_without_tls() {
        let hash = bcrypt::hash("secret", 4).unwrap();
        let c = load(&format!(
            "basic_auth_users:\n  prom: {hash}\nhttp_server_config:\n  http2: true\n  headers:\n    x-frame-options: deny\n"
        ))
        .unwrap();
        assert!(c.tls.is_none());
        assert_eq!(c.users.len(), 1);
        assert_eq!(c.headers, "X-Frame-Options: deny\r\n");
        assert!(load("").unwrap().users.is_empty());
    }

    #[test]
    fn mistakes_are_one_line() {
        assert!(refusal("basic_auth_user: {}\n").contains("unknown field `basic_auth_user`"));
        assert!(refusal("basic_auth_users:\n  prom: plain\n").contains("prom: not a bcrypt hash"));
        assert!(
            refusal("http_server_config:\n  headers:\n    Server: x\n").contains("cannot be set")
        );
        assert!(
            refusal("http_server_config:\n  headers:\n    X-Frame-Options: allow\n")
                .contains("not one of deny, sameorigin")
        );
        assert!(refusal("rate_limit: {interval: 1s}\n").contains("rate_limit"));
        assert!(refusal("tls_server_config:\n  cert: x\n").contains("use cert_file"));
        assert!(refusal("[1, 2]\n").starts_with("--web-config "));
    }
}
