//! Durations on the command line: a whole number and a unit, `200ms`, `30s`, `5m`, `1h`, `7d`.

use std::time::Duration;

/// The longest duration accepted (10 years): anything longer is surely a typo.
pub const MAX_DURATION: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// Why a duration was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not `NUMBER UNIT`.
    #[error(
        "{0:?} is not a duration: write a whole number and a unit, like 200ms, 30s, 5m, 1h or 7d"
    )]
    Syntax(String),
    /// Longer than [`MAX_DURATION`].
    #[error("{0:?} is longer than the 10-year maximum")]
    TooLong(String),
}

/// Parse `200ms`, `30s`, `5m`, `1h`, `7d` (and `0` alone). No spaces, no fractions, no sums.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let syntax = || DurationError::Syntax(text.to_string());
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(syntax)?;
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(syntax());
    }
    let n: u64 = number
        .parse()
        .map_err(|_| DurationError::TooLong(text.to_string()))?;
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(syntax()),
    };
    let millis = n
        .checked_mul(millis_per_unit)
        .ok_or_else(|| DurationError::TooLong(text.to_string()))?;
    let d = Duration::from_millis(millis);
    if d > MAX_DURATION {
        return Err(DurationError::TooLong(text.to_string()));
    }
    Ok(d)
}

/// A duration as [`parse_duration`] reads it, in the largest unit that divides it (`1500ms`,
/// `2s`, `5m`, `0`). Sub-millisecond parts are dropped.
pub fn format_duration(d: Duration) -> String {
    let millis = d.as_millis();
    if millis == 0 {
        return "0".into();
    }
    let units = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    for (per, unit) in units {
        if millis.is_multiple_of(per) {
            return format!("{}{unit}", millis / per);
        }
    }
    format!("{millis}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_durations_read_back() {
        for text in ["0", "1500ms", "2s", "5m", "1h", "7d", "90s"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(format_duration(d), text);
        }
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
    }

    #[test]
    fn units() {
        assert_eq!(parse_duration("200ms"), Ok(Duration::from_millis(200)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86400)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn refusals() {
        for bad in ["", "s", "10", "1.5s", "-1s", "1 s", "1sec", "1h30m", "ms"] {
            assert!(
                matches!(parse_duration(bad), Err(DurationError::Syntax(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            parse_duration("3651d"),
            Err(DurationError::TooLong(_))
        ));
        assert!(matches!(
            parse_duration("99999999999999999999d"),
            Err(DurationError::TooLong(_))
        ));
        assert!(matches!(
            parse_duration("18446744073709551615d"),
            Err(DurationError::TooLong(_))
        ));
    }
}
