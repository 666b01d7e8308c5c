//! Time stamps for snapshots, without a date crate: the civil calendar from days since the
//! epoch is a few lines of integer arithmetic (Howard Hinnant's `civil_from_days`).
//!
//! A run notes its times as `YYYY-mm-dd HH:MM:SS` in UTC (`utc_now_string`); a snapshot of
//! schema 2 holds them as RFC 3339 with the offset written out (`2026-11-29T21:33:55+00:00`,
//! `rfc3339`), and reads any offset back (`parse_rfc3339`). Schema 1 held the first form.

use std::time::{SystemTime, UNIX_EPOCH};

/// (year, month 1..=12, day 1..=31) of a day counted from 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st, 0..=365
    let mp = (5 * doy + 2) / 153; // month from March, 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days from 1970-01-01 to a civil date (the inverse of `civil_from_days`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = year - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * if m > 2 { m - 3 } else { m + 9 } + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch (negative before it).
fn epoch_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
    }
}

/// (year, month, day, hour, minute, second) in UTC.
fn parts(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400) as u32;
    (y, mo, d, s / 3600, s / 60 % 60, s % 60)
}

/// `YYYY-mm-dd HH:MM:SS`, UTC.
fn utc_string(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = parts(epoch_seconds(t));
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// The current time as `YYYY-mm-dd HH:MM:SS`, UTC: what `RunInfo::started` and
/// `Snapshot::taken` hold.
pub(crate) fn utc_now_string() -> String {
    utc_string(SystemTime::now())
}

/// `YYYYmmdd-HHMMSS`, UTC: the stamp in exported file names.
pub(crate) fn file_stamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = parts(epoch_seconds(t));
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// Seconds since the epoch of a `YYYY-mm-dd HH:MM:SS` UTC string; None when it is not one.
pub(crate) fn parse_utc(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(y, mo as u32, d as u32);
    // A day past the month's end (2024-02-30) does not round-trip: refuse it.
    if civil_from_days(days) != (y, mo as u32, d as u32) {
        return None;
    }
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

/// The file stamp (`YYYYmmdd-HHMMSS`, UTC) of an RFC 3339 time.
pub(crate) fn stamp_of(taken: &str) -> Option<String> {
    let secs = parse_rfc3339(taken)?;
    let (y, mo, d, h, mi, s) = parts(secs);
    Some(format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}"))
}

/// A moment as RFC 3339 in UTC (`rfc3339`).
pub(crate) fn rfc3339_at(t: SystemTime) -> String {
    rfc3339(epoch_seconds(t))
}

/// RFC 3339 in UTC with its offset written out: `2026-11-29T21:33:55+00:00`.
pub(crate) fn rfc3339(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}+00:00")
}

/// A `YYYY-mm-dd HH:MM:SS` UTC string (a run's, or schema 1's) as RFC 3339; None when it is
/// not one.
fn rfc3339_of_utc(text: &str) -> Option<String> {
    parse_utc(text).map(rfc3339)
}

/// A time as a snapshot holds it: RFC 3339 as it is, a `YYYY-mm-dd HH:MM:SS` UTC string (a
/// run's, schema 1's) converted; anything else unchanged (it shows as written).
pub(crate) fn as_rfc3339(text: &str) -> String {
    if parse_rfc3339(text).is_some() {
        text.to_string()
    } else {
        rfc3339_of_utc(text).unwrap_or_else(|| text.to_string())
    }
}

/// Seconds since the epoch of an RFC 3339 time: `YYYY-mm-ddTHH:MM:SS`, an optional fraction of
/// a second (dropped), and `Z` or `±HH:MM`. None when it is not one.
pub(crate) fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = text.trim();
    if t.len() < 20 || !t.is_char_boundary(19) {
        return None;
    }
    let (date_time, mut zone) = t.split_at(19);
    let sep = date_time.as_bytes()[10];
    if !matches!(sep, b'T' | b't') {
        return None;
    }
    let local = parse_utc(&format!("{} {}", &date_time[..10], &date_time[11..]))?;
    if let Some(rest) = zone.strip_prefix('.') {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        zone = &rest[digits..];
    }
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let b = zone.as_bytes();
            let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
            if b.len() != 6
                || b[3] != b':'
                || !matches!(b[0], b'+' | b'-')
                || !digits(1..3)
                || !digits(4..6)
            {
                return None;
            }
            let hh: i64 = zone[1..3].parse().ok()?;
            let mm: i64 = zone[4..6].parse().ok()?;
            if hh > 23 || mm > 59 {
                return None;
            }
            let sign = if b[0] == b'-' { -1 } else { 1 };
            sign * (hh * 3600 + mm * 60)
        }
    };
    // Local time minus its offset is UTC.
    Some(local - offset)
}

/// A span of time as a person writes it, in ms: `90` (seconds), `90s`, `4m`, `1h30m`, `1.5m`.
/// The error (a usage error) is the text after "VALUE: " that the caller puts in front.
pub(crate) fn parse_duration_ms(text: &str) -> crate::base::error::Result<u64> {
    let bad = || crate::base::error::Error::usage("not a time span (e.g. 90s, 4m, 1h30m)");
    let mut ms = 0f64;
    let mut number = String::new();
    for ch in text.trim().chars() {
        if ch.is_ascii_digit() || ch == '.' {
            number.push(ch);
            continue;
        }
        let unit = match ch {
            'h' => 3_600_000.0,
            'm' => 60_000.0,
            's' => 1000.0,
            _ => return Err(bad()),
        };
        ms += number.parse::<f64>().map_err(|_| bad())? * unit;
        number.clear();
    }
    if !number.is_empty() {
        ms += number.parse::<f64>().map_err(|_| bad())? * 1000.0;
    }
    if text.trim().is_empty() || !ms.is_finite() {
        return Err(bad());
    }
    Ok(ms as u64)
}

/// An RFC 3339 time as the Markdown and the chart print it, in UTC: `2026-11-29 21:33:55 UTC`;
/// text that is not one is shown as it is.
pub(crate) fn display(text: &str) -> String {
    match parse_rfc3339(text) {
        Some(secs) => {
            let (y, mo, d, h, mi, s) = parts(secs);
            format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
        }
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn known_dates() {
        assert_eq!(utc_string(at(0)), "1970-01-01 00:00:00");
        assert_eq!(utc_string(at(951_782_400)), "2000-02-29 00:00:00");
        assert_eq!(utc_string(at(1_709_251_199)), "2024-02-29 23:59:59");
        assert_eq!(utc_string(at(1_735_689_600)), "2025-01-01 00:00:00");
        assert_eq!(file_stamp(at(1_709_251_199)), "20240229-235959");
        assert_eq!(
            utc_string(UNIX_EPOCH - Duration::from_secs(1)),
            "1969-12-31 23:59:59"
        );
    }

    #[test]
    fn days_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn parses_what_it_prints() {
        for secs in [0, 951_782_400, 1_709_251_199, 4_102_444_800] {
            assert_eq!(parse_utc(&utc_string(at(secs))), Some(secs as i64));
        }
        assert_eq!(
            stamp_of("2024-02-29T23:59:59+00:00").unwrap(),
            "20240229-235959"
        );
        for bad in [
            "",
            "2024-02-30 00:00:00",
            "2024-13-01 00:00:00",
            "2024-01-01T00:00:00",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
        assert_eq!(parse_utc("2024-01-01 24:00:00"), None);
        assert_eq!(parse_utc("2024-01-01 +1:00:00"), None);
    }

    #[test]
    fn rfc3339_round_trips_and_reads_any_offset() {
        for secs in [0, 951_782_400, 1_709_251_199, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&rfc3339(secs)), Some(secs));
        }
        assert_eq!(rfc3339(1_709_251_199), "2024-02-29T23:59:59+00:00");
        let utc = parse_rfc3339("2024-02-29T23:59:59Z").unwrap();
        assert_eq!(parse_rfc3339("2024-03-01T00:59:59+01:00"), Some(utc));
        assert_eq!(parse_rfc3339("2024-02-29T18:29:59.123-05:30"), Some(utc));
        for bad in [
            "2024-02-29 23:59:59",
            "2024-02-29T23:59:59",
            "2024-02-29T23:59:59+0100",
            "2024-02-30T00:00:00Z",
            "2024-02-29T23:59:59.Z",
            "2024-02-29T23:59:59+24:00",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(
            rfc3339_of_utc("2026-11-29 21:33:55").unwrap(),
            "2026-11-29T21:33:55+00:00"
        );
        assert_eq!(
            display("2026-11-29T22:33:55+01:00"),
            "2026-11-29 21:33:55 UTC"
        );
        assert_eq!(display("whenever"), "whenever");
    }

    #[test]
    fn now_is_well_formed() {
        assert!(parse_utc(&utc_now_string()).is_some());
    }
}
