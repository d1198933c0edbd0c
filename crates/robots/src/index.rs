//! The matching index of one crawler's rules, built on the first check.

use crate::pattern::{self, Shape};
use crate::store::{CompactRule, RuleStore};

/// The first bytes of a text packed into a word, with a mask of how many count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    bytes: u64,
    mask: u64,
}

impl Fingerprint {
    /// The first `min(len, 8)` bytes of `text`.
    fn of(text: &[u8], len: usize) -> Fingerprint {
        let len = len.min(8).min(text.len());
        let mut word = [0u8; 8];
        word[..len].copy_from_slice(&text[..len]);
        let mask = if len == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * len)) - 1
        };
        Fingerprint {
            bytes: u64::from_le_bytes(word),
            mask,
        }
    }

    /// Whether a text starting with `prefix` (its first eight bytes) can start with this head.
    fn admits(&self, prefix: u64) -> bool {
        prefix & self.mask == self.bytes
    }
}

/// Groups with more rules than this get buckets; smaller ones are scanned in full.
const BUCKET_THRESHOLD: usize = 8;

/// Rule positions grouped by one byte, in compressed rows.
#[derive(Debug, Clone)]
struct Buckets {
    /// `items[starts[b]..starts[b + 1]]` holds the rules keyed by byte `b`.
    starts: Box<[u32; 257]>,
    items: Vec<u32>,
}

impl Buckets {
    fn build(keyed: &[(u8, u32)]) -> Buckets {
        let mut starts = Box::new([0u32; 257]);
        for (key, _) in keyed {
            starts[usize::from(*key) + 1] += 1;
        }
        for i in 1..257 {
            starts[i] += starts[i - 1];
        }
        let mut next = *starts;
        let mut items = vec![0u32; keyed.len()];
        for (key, position) in keyed {
            let slot = &mut next[usize::from(*key)];
            items[*slot as usize] = *position;
            *slot += 1;
        }
        Buckets { starts, items }
    }

    fn get(&self, key: u8) -> &[u32] {
        let key = usize::from(key);
        self.items
            .get(self.starts[key] as usize..self.starts[key + 1] as usize)
            .unwrap_or_default()
    }
}

/// What matching needs beyond the rules themselves, built on the first check so that parsing
/// alone never pays for it.
///
/// Per rule: its shape (wildcards, anchor), an eight-byte fingerprint of its literal head and a
/// byte-presence filter. Large groups also get buckets, so a URL only tries the rules that can
/// match it:
/// - a rule whose literal head is `/` plus at least one byte can only match a path with the
///   same second byte;
/// - otherwise, an anchored rule can only match a path ending in its last byte;
/// - the rest (`/`, `/*foo`, `*foo` ...) are always tried.
#[derive(Debug, Clone)]
pub(crate) struct Index {
    matchers: Vec<Matcher>,
    buckets: Option<(Buckets, Buckets)>,
    /// Rules tried for every URL (all of them when there are no buckets).
    general: Vec<u32>,
}

/// What matching one rule needs, in one record so a candidate costs one cache line.
#[derive(Debug, Clone, Copy)]
struct Matcher {
    /// Up to the first eight bytes of the literal head: most non-matches are turned away
    /// without touching the rule text.
    head: Fingerprint,
    /// [`byte_set`] of a wildcard rule's literal bytes (0 for literal rules, which the head and
    /// one comparison settle).
    needs: u64,
    /// [`CompactRule::order_key`].
    order: u64,
    /// The canonical body in the arena.
    body: (u32, u32),
    shape: Shape,
    /// A literal rule of at most eight bytes: `head` is the whole pattern.
    head_is_pattern: bool,
}

impl Matcher {
    fn of(rule: &CompactRule, body: &[u8]) -> Matcher {
        let shape = Shape::of_body(body, rule.anchored);
        Matcher {
            shape,
            order: rule.order_key(),
            body: rule.body,
            head: Fingerprint::of(body, shape.head_len(body)),
            head_is_pattern: !shape.has_wildcard() && body.len() <= 8,
            needs: if shape.has_wildcard() {
                byte_set(body)
            } else {
                0
            },
        }
    }
}

impl Index {
    pub(crate) fn build(store: &RuleStore) -> Index {
        let rules = store.rules();
        let matchers: Vec<Matcher> = rules
            .iter()
            .map(|rule| Matcher::of(rule, store.body(rule)))
            .collect();
        let all = || (0..rules.len()).map(|position| u32::try_from(position).unwrap_or(u32::MAX));
        if rules.len() <= BUCKET_THRESHOLD {
            return Index {
                matchers,
                buckets: None,
                general: all().collect(),
            };
        }
        let mut by_second = Vec::new();
        let mut by_last = Vec::new();
        let mut general = Vec::new();
        for (position, (rule, matcher)) in all().zip(rules.iter().zip(&matchers)) {
            let body = store.body(rule);
            match body {
                [b'/', second, ..] if matcher.shape.head_len(body) >= 2 => {
                    by_second.push((*second, position))
                }
                [.., last] if rule.anchored && *last != b'*' => by_last.push((*last, position)),
                _ => general.push(position),
            }
        }
        Index {
            matchers,
            buckets: Some((Buckets::build(&by_second), Buckets::build(&by_last))),
            general,
        }
    }

    /// The position in `store` of the best-ranked rule that matches the canonical `path`.
    pub(crate) fn best(&self, store: &RuleStore, path: &[u8]) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        let prefix = Fingerprint::of(path, 8).bytes;
        // Only wildcard rules need the path's byte set: worked out once, when first needed.
        let mut has: Option<u64> = None;
        let canonical = store.canonical();
        let mut consider = |position: u32| {
            let position = position as usize;
            let Some(matcher) = self.matchers.get(position) else {
                return;
            };
            if !matcher.head.admits(prefix)
                || best.is_some_and(|(best_key, _)| matcher.order >= best_key)
            {
                return;
            }
            if matcher.needs != 0
                && matcher.needs & !*has.get_or_insert_with(|| byte_set(path)) != 0
            {
                return;
            }
            if matcher.matches(canonical, path) {
                best = Some((matcher.order, position));
            }
        };
        if let Some((by_second_byte, by_last_byte)) = &self.buckets {
            if let [b'/', second, ..] = path {
                by_second_byte
                    .get(*second)
                    .iter()
                    .copied()
                    .for_each(&mut consider);
            }
            if let Some(last) = path.last() {
                by_last_byte
                    .get(*last)
                    .iter()
                    .copied()
                    .for_each(&mut consider);
            }
        }
        self.general.iter().copied().for_each(&mut consider);
        best.map(|(_, position)| position)
    }
}

impl Matcher {
    /// Whether the rule matches `path`, once its fingerprint has admitted it.
    fn matches(&self, canonical: &[u8], path: &[u8]) -> bool {
        if self.head_is_pattern {
            // The fingerprint already compared the whole pattern.
            return !self.shape.anchored || path.len() == (self.body.1 - self.body.0) as usize;
        }
        let body = canonical
            .get(self.body.0 as usize..self.body.1 as usize)
            .unwrap_or_default();
        pattern::matches(body, self.shape, path)
    }
}

/// A 64-bit summary of which bytes occur in a text (byte value modulo 64): a rule needing a
/// byte the path lacks cannot match, which turns most wildcard rules away cheaply.
fn byte_set(text: &[u8]) -> u64 {
    text.iter()
        .filter(|&&b| b != b'*')
        .fold(0, |set, &b| set | 1 << (b & 63))
}
