//! Wall-clock time broken down in the local time zone.

use std::time::{SystemTime, UNIX_EPOCH};

/// Broken-down local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// Offset from UTC in seconds.
    pub utc_offset_s: i64,
}

impl LocalTime {
    /// `2026-11-22T07:10:02+01:00`.
    pub fn iso(&self) -> String {
        let off = self.utc_offset_s;
        let (sign, off) = if off < 0 { ('-', -off) } else { ('+', off) };
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            off / 3600,
            off / 60 % 60
        )
    }
}

/// `t` in the local time zone (libc `localtime_r`; UTC if that fails).
pub fn local_time(t: SystemTime) -> LocalTime {
    // SAFETY: `tm` is plain data for which all zeroes is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let secs: i64 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    // `time_t` is 32 bits in a 32-bit process: a time it cannot hold is
    // given in UTC rather than wrapped.
    let ok = match libc::time_t::try_from(secs) {
        Ok(c_secs) => {
            // SAFETY: both pointers are valid for the call; localtime_r is
            // the thread-safe variant and writes only `tm`.
            unsafe { !libc::localtime_r(&c_secs, &mut tm).is_null() }
        }
        Err(_) => false,
    };
    if !ok {
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        return LocalTime {
            year: y as i32,
            month: m,
            day: d,
            hour: (rem / 3600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
            utc_offset_s: 0,
        };
    }
    // `tm_gmtoff` is a C long: i64 here, i32 on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    LocalTime {
        year: tm.tm_year + 1900,
        month: (tm.tm_mon + 1) as u32,
        day: tm.tm_mday as u32,
        hour: tm.tm_hour as u32,
        minute: tm.tm_min as u32,
        second: tm.tm_sec as u32,
        utc_offset_s: i64::from(tm.tm_gmtoff),
    }
}

/// Days since 1970-01-01 → (year, month, day) in the proleptic Gregorian
/// calendar (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn local_time_is_consistent_with_utc_offset() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_327_802);
        let lt = local_time(t);
        // Local wall clock minus offset is the UTC wall clock.
        let local_secs = (lt.hour * 3600 + lt.minute * 60 + lt.second) as i64;
        let utc_secs = (1_795_327_802i64 - lt.utc_offset_s).rem_euclid(86_400);
        assert_eq!(local_secs, utc_secs);
        assert!(lt.iso().starts_with(&format!("{:04}-", lt.year)));
    }
}
