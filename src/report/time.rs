//! UTC time stamps for snapshots, without a date crate: the civil calendar from days since the
//! epoch is a few lines of integer arithmetic (Howard Hinnant's `civil_from_days`).

use std::time::{SystemTime, UNIX_EPOCH};

/// (year, month 1..=12, day 1..=31) of a day counted from 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
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
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
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
pub(crate) fn utc_string(t: SystemTime) -> String {
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

/// The file stamp (`YYYYmmdd-HHMMSS`) of a `YYYY-mm-dd HH:MM:SS` string.
pub(crate) fn stamp_of(taken: &str) -> Option<String> {
    let secs = parse_utc(taken)?;
    let (y, mo, d, h, mi, s) = parts(secs);
    Some(format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}"))
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
        assert_eq!(stamp_of("2024-02-29 23:59:59").unwrap(), "20240229-235959");
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
    fn now_is_well_formed() {
        assert!(parse_utc(&utc_now_string()).is_some());
    }
}
