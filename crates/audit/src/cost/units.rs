//! The units of comparison work, each roughly a nanosecond of CPU on the machine the crate
//! README measures: what merging, comparing and checking rules count against
//! [`COMPARISON_BUDGET`](super::COMPARISON_BUDGET).

use std::collections::HashMap;

/// What merging one rule into a rule set (and setting it up for comparison) counts.
pub const RULE_COST: u64 = 64;
/// What comparing two rules counts, besides the path matched and the pattern's pieces.
pub const PAIR_COST: u64 = 8;
/// What each `*` of a pattern matched counts: the piece after it is a substring search of
/// its own.
pub const PIECE_COST: u64 = 64;
/// What checking one path against a rule set counts, besides the path's length and the
/// rules the check may have to try ([`CheckCost`]).
pub const PROBE_COST: u64 = 32;

/// What checking a path against one rule set may cost: an upper bound of the work the
/// engine's index does, worked out from the rules it may try.
///
/// The engine keys a rule by the bytes its literal head (the text before its first `*`)
/// must find in the path: the path's second and third bytes, or its second byte, or for an
/// anchored rule its last byte; the other rules are tried for every path, after a test of
/// the bytes the rule needs. A rule whose first bytes differ from the path's is turned away
/// at once. So a check counts, for each rule of the buckets the path selects: 1 unit, and
/// for a rule that passes those tests the bytes of its head, or for a rule with `*`,
/// [`PIECE_COST`] and a sixteenth of the path's length for each piece (each piece is a
/// substring search in the path). The engine also stops at its first match, which this
/// bound ignores.
#[derive(Debug, Default)]
pub(crate) struct CheckCost {
    /// Rules keyed by the two bytes after the `/`.
    by_pair: HashMap<[u8; 2], Vec<Candidate>>,
    /// Rules keyed by the byte after the `/`.
    by_second: HashMap<u8, Vec<Candidate>>,
    /// Anchored rules keyed by their last byte.
    by_last: HashMap<u8, Vec<Candidate>>,
    /// Rules tried for every path.
    general: Vec<Candidate>,
}

/// One rule as the cost of trying it is worked out.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// The first bytes of the literal head (at most eight), zero-padded.
    head: [u8; 8],
    /// How many of `head` count.
    head_len: usize,
    /// The bytes the pattern needs, as the engine's 64-bit test sees them.
    needs: u64,
    /// `*`-separated pieces after the head.
    pieces: u64,
    /// The whole literal head's length.
    literal_len: u64,
}

/// The engine's 64-bit summary of which bytes occur in `text` (byte value modulo 64).
fn byte_set(text: &[u8]) -> u64 {
    text.iter()
        .filter(|&&b| b != b'*')
        .fold(0, |set, &b| set | 1 << (b & 63))
}

impl CheckCost {
    /// The check cost of `rules`.
    pub(crate) fn of(rules: &robots::AgentRules) -> CheckCost {
        let mut cost = CheckCost::default();
        for rule in rules.rules() {
            let canonical = rule.canonical_pattern();
            let (body, anchored) = match canonical.as_bytes().split_last() {
                Some((b'$', body)) => (body, true),
                _ => (canonical.as_bytes(), false),
            };
            let literal = body.split(|&b| b == b'*').next().unwrap_or_default();
            let mut head = [0u8; 8];
            let head_len = literal.len().min(8);
            head[..head_len].copy_from_slice(&literal[..head_len]);
            let candidate = Candidate {
                head,
                head_len,
                needs: byte_set(body),
                pieces: body.iter().filter(|&&b| b == b'*').count() as u64,
                literal_len: u64::try_from(literal.len()).unwrap_or(u64::MAX),
            };
            match body {
                [b'/', second, third, ..] if literal.len() >= 3 => {
                    cost.by_pair.entry([*second, *third]).or_default()
                }
                [b'/', second, ..] if literal.len() >= 2 => {
                    cost.by_second.entry(*second).or_default()
                }
                [.., last] if anchored && *last != b'*' => cost.by_last.entry(*last).or_default(),
                _ => &mut cost.general,
            }
            .push(candidate);
        }
        cost
    }

    /// What checking `path` (a path, `/...`) may cost.
    pub(crate) fn of_path(&self, path: &str) -> u64 {
        let path = path.as_bytes();
        let len = u64::try_from(path.len()).unwrap_or(u64::MAX);
        let per_piece = PIECE_COST.saturating_add(len / 16);
        let has = byte_set(path);
        let try_rule = |candidate: &Candidate, test_bytes: bool| -> u64 {
            let head = &candidate.head[..candidate.head_len];
            if !path.starts_with(head) || (test_bytes && candidate.needs & !has != 0) {
                return 1;
            }
            match candidate.pieces {
                0 => 1 + candidate.literal_len,
                pieces => 1 + candidate.literal_len + pieces.saturating_mul(per_piece),
            }
        };
        let keyed = |bucket: Option<&Vec<Candidate>>| -> u64 {
            bucket.map_or(0, |rules| {
                rules
                    .iter()
                    .map(|candidate| try_rule(candidate, false))
                    .fold(0, u64::saturating_add)
            })
        };
        let by_pair = match path {
            [b'/', second, third, ..] => keyed(self.by_pair.get(&[*second, *third])),
            _ => 0,
        };
        let by_second = match path {
            [b'/', second, ..] => keyed(self.by_second.get(second)),
            _ => 0,
        };
        let by_last = path.last().map_or(0, |last| keyed(self.by_last.get(last)));
        let general = self
            .general
            .iter()
            .map(|candidate| try_rule(candidate, candidate.pieces > 0))
            .fold(0, u64::saturating_add);
        [PROBE_COST, len, by_pair, by_second, by_last, general]
            .into_iter()
            .fold(0, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(file: &str, path: &str) -> u64 {
        let rules = robots::RobotsTxt::parse(file.as_bytes()).global_rules();
        CheckCost::of(&rules).of_path(path)
    }

    #[test]
    fn only_the_rules_a_path_may_meet_count() {
        let base = cost("User-agent: *\n", "/abc");
        assert_eq!(base, PROBE_COST + 4);
        // Keyed by other bytes: not tried at all.
        assert_eq!(cost("User-agent: *\nDisallow: /xyz*a*b\n", "/abc"), base);
        // Keyed by the path's bytes, but its head differs: turned away at once.
        assert_eq!(cost("User-agent: *\nDisallow: /abd*a\n", "/abc"), base + 1);
        // Tried for every path, but needs a byte the path lacks.
        assert_eq!(cost("User-agent: *\nDisallow: /*q*r\n", "/abc"), base + 1);
        // Tried in full: head, then two pieces searched for.
        assert_eq!(
            cost("User-agent: *\nDisallow: /*b*c\n", "/abc"),
            base + 1 + 1 + 2 * PIECE_COST
        );
    }
}
