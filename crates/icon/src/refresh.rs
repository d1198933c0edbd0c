//! When a domain's icon is looked for again: once it is 30 days old, or once per
//! 7 days while the domain has none.

use jiff::{SignedDuration, Timestamp};

/// How old a found icon gets before it is looked for again.
pub const ICON_REFRESH_AGE: SignedDuration = SignedDuration::from_hours(30 * 24);

/// How long a domain without an icon waits before it is looked for again.
pub const NO_ICON_RETRY_AGE: SignedDuration = SignedDuration::from_hours(7 * 24);

/// Whether the icon of a domain is due to be looked for at `now`: never looked for, or
/// last looked for at least [`ICON_REFRESH_AGE`] ago when it `has_icon`, at least
/// [`NO_ICON_RETRY_AGE`] ago when it has none.
///
/// A last check in the future (the clock moved back) waits as if it had been made now,
/// unless it lies more than one whole period ahead: no clock of this service can have
/// written that, so the stored time is not trusted and the icon is due.
pub fn icon_due(last_checked: Option<Timestamp>, has_icon: bool, now: Timestamp) -> bool {
    let Some(last) = last_checked else {
        return true;
    };
    let age = if has_icon {
        ICON_REFRESH_AGE
    } else {
        NO_ICON_RETRY_AGE
    };
    let elapsed = now.duration_since(last);
    elapsed >= age || elapsed < -age
}

/// When the icon will next be due, for a schedule that sleeps until then (`None`: due now).
pub fn next_icon_check(
    last_checked: Option<Timestamp>,
    has_icon: bool,
    now: Timestamp,
) -> Option<Timestamp> {
    if icon_due(last_checked, has_icon, now) {
        return None;
    }
    let age = if has_icon {
        ICON_REFRESH_AGE
    } else {
        NO_ICON_RETRY_AGE
    };
    last_checked.and_then(|last| last.checked_add(age).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a test timestamp")
    }

    #[test]
    fn a_domain_never_looked_at_is_due() {
        let now = at("2026-01-01T00:00:00Z");
        assert!(icon_due(None, false, now));
        assert!(icon_due(None, true, now));
        assert_eq!(next_icon_check(None, true, now), None);
    }

    #[test]
    fn an_icon_is_looked_for_again_after_30_days() {
        assert_eq!(ICON_REFRESH_AGE, SignedDuration::from_hours(720));
        let last = at("2026-01-01T00:00:00Z");
        assert!(!icon_due(Some(last), true, at("2026-01-30T23:59:59Z")));
        assert!(icon_due(Some(last), true, at("2026-01-31T00:00:00Z")));
        assert_eq!(
            next_icon_check(Some(last), true, at("2026-01-10T00:00:00Z")),
            Some(at("2026-01-31T00:00:00Z"))
        );
    }

    #[test]
    fn no_icon_is_looked_for_again_after_7_days() {
        assert_eq!(NO_ICON_RETRY_AGE, SignedDuration::from_hours(168));
        let last = at("2026-01-01T00:00:00Z");
        assert!(!icon_due(Some(last), false, at("2026-01-07T23:59:59Z")));
        assert!(icon_due(Some(last), false, at("2026-01-08T00:00:00Z")));
        // The same age with an icon is not due yet.
        assert!(!icon_due(Some(last), true, at("2026-01-08T00:00:00Z")));
    }

    #[test]
    fn a_last_check_in_the_future_waits_unless_impossibly_far() {
        let now = at("2026-01-10T00:00:00Z");
        assert!(!icon_due(Some(at("2026-01-11T00:00:00Z")), false, now));
        assert!(icon_due(Some(at("2026-01-18T00:00:01Z")), false, now));
        assert!(!icon_due(Some(at("2026-02-01T00:00:00Z")), true, now));
        assert!(icon_due(Some(at("2026-03-01T00:00:00Z")), true, now));
    }
}
