//! Basic auth against `basic_auth_users`' bcrypt hashes, without stalling the event loop.
//!
//! A bcrypt verify is slow on purpose (about 50 to 100 ms at cost 10): done on the loop, a
//! flood of wrong passwords would hold every other connection, a scrape included. So the loop
//! never verifies. It keeps a few credentials it has seen verified, as SHA-256 digests of
//! user, password and hash (never the password), compared in constant time: a scrape that
//! comes back every 15 s with the same credentials is answered at once. Anything else goes to
//! one verifier thread through a short queue; the connection waits (within its deadline) and
//! the loop is woken with the verdict. When the queue is full the request is answered 503 at
//! once: a flood of guesses delays only other uncached guesses, never a known scraper.
//!
//! An unknown user is verified against a dummy hash of the same cost as the real ones, so a
//! wrong password and an unknown user take the same path and the same time (both 401).

use crossbeam_channel::{Receiver, Sender, TrySendError};
use mio::Waker;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Verdicts the cache keeps: a fleet's scrapers use a credential or two.
const CACHED: usize = 16;
/// Verifications waiting at once; one more is answered 503.
const QUEUED: usize = 8;

/// A digest of user, password and the hash it was checked against.
type Key = [u8; 32];

/// What a request's `Authorization` header came to.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Allowed,
    /// No or malformed credentials, an unknown user, or a wrong password.
    Denied,
    /// Sent to the verifier: its verdict comes back through [`Auth::verdicts`].
    Pending,
    /// The verifier's queue is full.
    Busy,
}

struct Job {
    token: usize,
    key: Key,
    password: String,
    hash: String,
    known: bool,
}

/// The users, the cache, and the way to the verifier thread.
pub(super) struct Auth {
    users: BTreeMap<String, String>,
    /// A hash to verify unknown users against.
    dummy: String,
    cache: Vec<Key>,
    jobs: Sender<Job>,
    done: Receiver<(usize, Key, bool)>,
}

impl Auth {
    /// Starts the verifier thread; it wakes the loop through `waker` with each verdict.
    pub(super) fn start(waker: Arc<Waker>) -> std::io::Result<Auth> {
        let (jobs, queue) = crossbeam_channel::bounded::<Job>(QUEUED);
        let (verdicts, done) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("serve-auth".into())
            .spawn(move || {
                // Ends when the loop (the only sender) is gone.
                for job in queue {
                    let ok = bcrypt::verify(&job.password, &job.hash).unwrap_or(false) && job.known;
                    if verdicts.send((job.token, job.key, ok)).is_err() {
                        return;
                    }
                    let _ = waker.wake();
                }
            })?;
        Ok(Auth {
            users: BTreeMap::new(),
            dummy: String::new(),
            cache: Vec::new(),
            jobs,
            done,
        })
    }

    /// The users of a (re)loaded config; the cache is emptied.
    pub(super) fn set_users(&mut self, users: &BTreeMap<String, String>) {
        if *users != self.users {
            let cost = users
                .values()
                .filter_map(|h| h.parse::<bcrypt::HashParts>().ok())
                .map(|p| p.get_cost())
                .max();
            self.dummy = cost
                .and_then(|c| bcrypt::hash("not a password", c).ok())
                .unwrap_or_default();
            self.users = users.clone();
            self.cache.clear();
        }
    }

    /// Whether requests need credentials at all.
    pub(super) fn required(&self) -> bool {
        !self.users.is_empty()
    }

    /// The verdict on `authorization` (the header's value) for the connection `token`.
    pub(super) fn check(&mut self, token: usize, authorization: Option<&str>) -> Verdict {
        let Some((user, password)) = authorization.and_then(credentials) else {
            return Verdict::Denied;
        };
        let (hash, known) = match self.users.get(&user) {
            Some(h) => (h.clone(), true),
            None => (self.dummy.clone(), false),
        };
        let key = digest(&user, &password, &hash);
        let hit = self
            .cache
            .iter()
            .fold(subtle::Choice::from(0), |seen, k| seen | k.ct_eq(&key));
        if known && bool::from(hit) {
            return Verdict::Allowed;
        }
        let job = Job {
            token,
            key,
            password,
            hash,
            known,
        };
        match self.jobs.try_send(job) {
            Ok(()) => Verdict::Pending,
            Err(TrySendError::Full(_)) => Verdict::Busy,
            Err(TrySendError::Disconnected(_)) => Verdict::Denied,
        }
    }

    /// The verdicts that came back since the last call, by connection; good ones are cached.
    pub(super) fn verdicts(&mut self) -> Vec<(usize, bool)> {
        let mut out = Vec::new();
        while let Ok((token, key, ok)) = self.done.try_recv() {
            if ok {
                if self.cache.len() >= CACHED {
                    self.cache.remove(0);
                }
                self.cache.push(key);
            }
            out.push((token, ok));
        }
        out
    }
}

fn digest(user: &str, password: &str, hash: &str) -> Key {
    let mut h = Sha256::new();
    for part in [user, password, hash] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().into()
}

/// `Basic base64(user:password)` as user and password.
fn credentials(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64_decode(encoded.trim())?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// Standard base64 with padding (RFC 4648), as Basic credentials are written.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_read_from_basic_only() {
        assert_eq!(
            credentials("Basic cHJvbTpzZTpjcmV0"),
            Some(("prom".into(), "se:cret".into()))
        );
        assert_eq!(credentials("Bearer cHJvbTpzZWNyZXQ="), None);
        assert_eq!(credentials("Basic !!!"), None);
        assert_eq!(credentials("Basic"), None);
    }
}
