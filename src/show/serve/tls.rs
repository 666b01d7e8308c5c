//! `tls_server_config` as a rustls server config (the `ring` provider): the certificate chain
//! and its key (checked to match), the protocol versions, the TLS 1.2 cipher suites and the key
//! exchange groups in the config's order, and client certificates verified against
//! `client_ca_file` (webpki).
//!
//! exporter-toolkit's meanings, where rustls can give them: `cipher_suites` picks TLS 1.2's
//! suites only (TLS 1.3's are not configurable there either); `RequestClientCert` and
//! `RequireAnyClientCert` ask for a certificate they do not verify, which rustls does not do,
//! so they are refused; a `client_ca_file` without a policy that uses it is refused, as
//! exporter-toolkit refuses it. Only Linux builds have TLS (ring compiles C for its target);
//! elsewhere a config that names a certificate is refused in one line.

use serde::Deserialize;
use std::path::PathBuf;

/// `tls_server_config`, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
// Read by the TLS setup, which only Linux builds have.
#[cfg_attr(not(web_tls), allow(dead_code))]
pub(super) struct TlsFile {
    pub(super) cert_file: Option<PathBuf>,
    pub(super) key_file: Option<PathBuf>,
    pub(super) client_auth_type: Option<String>,
    pub(super) client_ca_file: Option<PathBuf>,
    pub(super) min_version: Option<String>,
    pub(super) max_version: Option<String>,
    #[serde(default)]
    pub(super) cipher_suites: Vec<String>,
    #[serde(default)]
    pub(super) curve_preferences: Vec<String>,
    /// Whether the server's cipher order wins over the client's.
    pub(super) prefer_server_cipher_suites: Option<bool>,
    /// exporter-toolkit's inline PEM and SAN filter: refused by name.
    pub(super) cert: Option<serde_norway::Value>,
    pub(super) key: Option<serde_norway::Value>,
    pub(super) client_ca: Option<serde_norway::Value>,
    pub(super) client_allowed_sans: Option<serde_norway::Value>,
}

#[cfg(web_tls)]
pub(super) use linux::Settings;
#[cfg(not(web_tls))]
pub(super) use other::Settings;

#[cfg(web_tls)]
mod linux {
    use super::TlsFile;
    use crate::base::error::{Error, Result};
    use rustls::crypto::{CryptoProvider, ring};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use rustls::server::WebPkiClientVerifier;
    use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion, version};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    /// A checked TLS setup: what each new connection is served with.
    #[derive(Debug, Clone)]
    pub struct Settings {
        pub(in crate::show::serve) config: Arc<ServerConfig>,
    }

    impl Settings {
        /// None when the config names no certificate (exporter-toolkit then serves plain
        /// HTTP). Every file read is added to `files`.
        pub(in crate::show::serve) fn load(
            t: &TlsFile,
            dir: &Path,
            files: &mut Vec<PathBuf>,
        ) -> Result<Option<Settings>> {
            let (cert_file, key_file) = match (&t.cert_file, &t.key_file) {
                (None, None) => return Ok(None),
                (Some(c), Some(k)) => (resolve(dir, c), resolve(dir, k)),
                (None, Some(_)) => return Err(usage("tls_server_config: cert_file is missing")),
                (Some(_), None) => return Err(usage("tls_server_config: key_file is missing")),
            };
            let certs = read_certs(&cert_file, "cert_file")?;
            let key = PrivateKeyDer::from_pem_file(&key_file)
                .map_err(|e| usage(format!("key_file {}: {e}", key_file.display())))?;
            files.extend([cert_file.clone(), key_file.clone()]);
            let provider = Arc::new(provider(t)?);
            let versions = versions(t)?;
            let builder = ServerConfig::builder_with_provider(provider.clone())
                .with_protocol_versions(&versions)
                .map_err(|e| usage(format!("tls_server_config: {e}")))?;
            let verifier = client_verifier(t, dir, files, provider)?;
            let mut config = builder
                .with_client_cert_verifier(verifier)
                .with_single_cert(certs, key)
                .map_err(|e| {
                    usage(format!(
                        "cert_file {} and key_file {}: {e}",
                        cert_file.display(),
                        key_file.display()
                    ))
                })?;
            config.ignore_client_order = t.prefer_server_cipher_suites.unwrap_or(true);
            Ok(Some(Settings {
                config: Arc::new(config),
            }))
        }
    }

    /// `relative` against the config file's directory, as exporter-toolkit resolves it.
    fn resolve(dir: &Path, relative: &Path) -> PathBuf {
        if relative.is_absolute() {
            relative.to_path_buf()
        } else {
            dir.join(relative)
        }
    }

    fn usage(message: impl Into<String>) -> Error {
        Error::usage(message)
    }

    fn read_certs(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>> {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(|e| usage(format!("{key} {}: {e}", path.display())))?;
        if certs.is_empty() {
            return Err(usage(format!(
                "{key} {}: no PEM certificate in it",
                path.display()
            )));
        }
        Ok(certs)
    }

    /// TLS 1.2 and 1.3 by default, as exporter-toolkit; 1.0 and 1.1 are not in rustls.
    fn versions(t: &TlsFile) -> Result<Vec<&'static SupportedProtocolVersion>> {
        let rank = |key: &str, v: &Option<String>, default: u8| -> Result<u8> {
            match v.as_deref() {
                None => Ok(default),
                Some("TLS12") => Ok(12),
                Some("TLS13") => Ok(13),
                Some(old @ ("TLS10" | "TLS11")) => Err(usage(format!(
                    "tls_server_config.{key}: {old}: rustls has no TLS 1.0 or 1.1 (TLS12 or TLS13)"
                ))),
                Some(other) => Err(usage(format!(
                    "tls_server_config.{key}: {other}: not a version (TLS12 or TLS13)"
                ))),
            }
        };
        let (min, max) = (
            rank("min_version", &t.min_version, 12)?,
            rank("max_version", &t.max_version, 13)?,
        );
        if min > max {
            return Err(usage("tls_server_config: min_version is above max_version"));
        }
        Ok([(12, &version::TLS12), (13, &version::TLS13)]
            .into_iter()
            .filter(|(v, _)| (min..=max).contains(v))
            .map(|(_, p)| p)
            .collect())
    }

    /// ring's provider with the config's TLS 1.2 suites and curves, in its order.
    fn provider(t: &TlsFile) -> Result<CryptoProvider> {
        // ring rather than aws-lc-rs (which has the post-quantum groups) so that the build
        // needs no cmake and links statically under musl.
        #[allow(deprecated)]
        let mut p = ring::default_provider();
        if !t.cipher_suites.is_empty() {
            let (tls13, tls12): (Vec<_>, Vec<_>) = p
                .cipher_suites
                .iter()
                .partition(|s| s.version() == &version::TLS13);
            let mut chosen = tls13;
            for name in &t.cipher_suites {
                let found = tls12.iter().find(|s| suite_names(s).contains(name));
                let Some(s) = found else {
                    let offered: Vec<String> =
                        tls12.iter().map(|s| format!("{:?}", s.suite())).collect();
                    return Err(usage(format!(
                        "tls_server_config.cipher_suites: {name}: not offered by rustls (TLS 1.2: {})",
                        offered.join(", ")
                    )));
                };
                chosen.push(*s);
            }
            p.cipher_suites = chosen;
        }
        if !t.curve_preferences.is_empty() {
            let mut groups = Vec::new();
            for name in &t.curve_preferences {
                let want = match name.as_str() {
                    "X25519" => "X25519",
                    "CurveP256" => "secp256r1",
                    "CurveP384" => "secp384r1",
                    _ => {
                        return Err(usage(format!(
                            "tls_server_config.curve_preferences: {name}: not offered by rustls \
                             (X25519, CurveP256, CurveP384)"
                        )));
                    }
                };
                groups.extend(
                    p.kx_groups
                        .iter()
                        .filter(|g| format!("{:?}", g.name()) == want),
                );
            }
            p.kx_groups = groups;
        }
        Ok(p)
    }

    /// The names a suite goes by: rustls's (the IANA name) and Go's shorter one for
    /// ChaCha20-Poly1305 (`…_CHACHA20_POLY1305`, as exporter-toolkit's files write it).
    fn suite_names(s: &rustls::SupportedCipherSuite) -> Vec<String> {
        let iana = format!("{:?}", s.suite());
        let go = iana
            .strip_suffix("_SHA256")
            .filter(|n| n.ends_with("CHACHA20_POLY1305"))
            .map(str::to_string);
        std::iter::once(iana).chain(go).collect()
    }

    fn client_verifier(
        t: &TlsFile,
        dir: &Path,
        files: &mut Vec<PathBuf>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>> {
        let policy = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
        let optional = match policy {
            "NoClientCert" if t.client_ca_file.is_some() => {
                return Err(usage(
                    "tls_server_config: client_ca_file without a client_auth_type that verifies \
                     (VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
                ));
            }
            "NoClientCert" => return Ok(WebPkiClientVerifier::no_client_auth()),
            "VerifyClientCertIfGiven" => true,
            "RequireAndVerifyClientCert" => false,
            "RequestClientCert" | "RequireAnyClientCert" => {
                return Err(usage(format!(
                    "tls_server_config.client_auth_type: {policy}: rustls verifies every client \
                     certificate it asks for (VerifyClientCertIfGiven or RequireAndVerifyClientCert)"
                )));
            }
            other => {
                return Err(usage(format!(
                    "tls_server_config.client_auth_type: {other}: not a policy (NoClientCert, \
                     VerifyClientCertIfGiven, RequireAndVerifyClientCert)"
                )));
            }
        };
        let Some(ca) = &t.client_ca_file else {
            return Err(usage(format!(
                "tls_server_config: {policy} needs client_ca_file"
            )));
        };
        let ca = resolve(dir, ca);
        let mut roots = RootCertStore::empty();
        for cert in read_certs(&ca, "client_ca_file")? {
            roots
                .add(cert)
                .map_err(|e| usage(format!("client_ca_file {}: {e}", ca.display())))?;
        }
        files.push(ca.clone());
        let builder = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
        let builder = if optional {
            builder.allow_unauthenticated()
        } else {
            builder
        };
        builder
            .build()
            .map_err(|e| usage(format!("client_ca_file {}: {e}", ca.display())))
    }
}

#[cfg(not(web_tls))]
mod other {
    use super::TlsFile;
    use crate::base::error::{Error, Result};
    use std::path::{Path, PathBuf};

    /// No TLS in this build: a config never holds one.
    #[derive(Debug, Clone)]
    pub enum Settings {}

    impl Settings {
        pub(in crate::show::serve) fn load(
            t: &TlsFile,
            _dir: &Path,
            _files: &mut Vec<PathBuf>,
        ) -> Result<Option<Settings>> {
            if t.cert_file.is_none() && t.key_file.is_none() {
                return Ok(None);
            }
            Err(Error::usage(
                "tls_server_config: TLS is in the Linux builds only (basic auth and headers work here)",
            ))
        }
    }
}
