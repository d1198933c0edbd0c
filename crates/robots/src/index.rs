//! The matching index of one crawler's rules, built on the first check.
//!
//! Each rule goes to one run of candidates, chosen by what a path must have for the rule to
//! match it:
//! - a literal head of `/` plus at least two bytes: the path's second and third bytes (a pair,
//!   hashed to one of 256 buckets);
//! - a literal head of `/` plus one byte: the path's second byte;
//! - otherwise, an anchored rule ending in a literal byte: the path's last byte;
//! - the rest (`/`, `/*foo`, `*foo`, ...) are tried for every path.
//!
//! A check tries the four runs a path selects and keeps the best-ranked match (most specific,
//! allow before disallow, file order). Small groups keep all their rules in the last run. Per
//! rule the index holds 24 bytes (the store position, its rank, the literal head's length and
//! its first eight bytes, which turn most candidates away without touching the patterns), plus
//! a 64-bit byte-presence filter for the wildcard rules tried for every path.

use std::ops::Range;

use crate::pattern::{self, Shape};
use crate::store::{self, RuleStore};
use crate::word::{first_eight, splat, zero_bytes};

/// Groups with more rules than this get buckets; smaller ones are scanned in full.
const BUCKET_THRESHOLD: usize = 8;

/// One rule in the index.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The first eight bytes of the rule's canonical pattern (zero-padded).
    fingerprint: u64,
    /// [`RuleStore::order_key`]: smaller is better.
    order: u64,
    /// Position in the store.
    rule: u32,
    /// Length of the literal text before the first `*` (the whole body without one), and in its
    /// two high bits whether the rule has a `*` and whether it is anchored.
    head: u32,
}

const WILDCARD: u32 = 1 << 31;
const ANCHORED: u32 = 1 << 30;
const HEAD_LEN: u32 = ANCHORED - 1;

impl Entry {
    fn head_len(self) -> usize {
        (self.head & HEAD_LEN) as usize
    }

    fn wildcard(self) -> bool {
        self.head & WILDCARD != 0
    }

    fn anchored(self) -> bool {
        self.head & ANCHORED != 0
    }

    /// Which bits of a path's first eight bytes the fingerprint compares.
    fn mask(self) -> u64 {
        // A table rather than a shift: the mask is worked out for every candidate of a check.
        MASKS[self.head_len().min(8)]
    }
}

/// `MASKS[n]`: the low `n` bytes of a word.
const MASKS: [u64; 9] = {
    let mut masks = [0u64; 9];
    let mut bytes = 1;
    while bytes < 9 {
        masks[bytes] = masks[bytes - 1] << 8 | 0xFF;
        bytes += 1;
    }
    masks
};

/// The runs of candidates, in the order of the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    ByPair = 0,
    BySecond = 1,
    ByLast = 2,
    General = 3,
}

/// The bucket of a pair of bytes.
fn pair(first: u8, second: u8) -> u8 {
    first.wrapping_mul(31) ^ second
}

/// Which entries hold the rules keyed by each byte: a 256-bit presence map and the start of
/// each present key's entries (ranked by the map), so an absent key costs one bit test.
#[derive(Debug, Clone, Default)]
struct Directory {
    present: [u64; 4],
    /// How many keys the words of `present` before each one hold: a key's rank is this plus
    /// the keys below it in its own word, with no loop over the words before it.
    before: [u16; 4],
    /// `starts[rank]..starts[rank + 1]`: the entries of the key of that rank.
    starts: Box<[u32]>,
}

impl Directory {
    /// The directory of one keyed run. `present` marks the run's keys; `next` holds how many
    /// entries each key of the run has, and becomes where each key's entries start, counted
    /// from `total`, which moves past the run's entries. Only present keys are visited: most
    /// groups use a few dozen of the 256.
    fn build(present: [u64; 4], next: &mut [u32], total: &mut u32) -> Directory {
        let keys: u32 = present.iter().map(|word| word.count_ones()).sum();
        let mut starts = Vec::with_capacity(keys as usize + 1);
        starts.push(*total);
        for (word_index, &word) in present.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let key = word_index * 64 + word.trailing_zeros() as usize;
                if let Some(slot) = next.get_mut(key) {
                    let count = *slot;
                    *slot = *total;
                    *total += count;
                }
                starts.push(*total);
                word &= word - 1;
            }
        }
        let mut before = [0u16; 4];
        for word in 1..4 {
            // At most 256 keys: no overflow.
            before[word] = before[word - 1] + present[word - 1].count_ones() as u16;
        }
        Directory {
            present,
            before,
            starts: starts.into_boxed_slice(),
        }
    }

    fn get(&self, key: u8) -> Range<usize> {
        let word = usize::from(key >> 6);
        let bit = 1u64 << (key & 63);
        if self.present[word] & bit == 0 {
            return 0..0;
        }
        let below = u32::from(self.before[word]);
        let rank = (below + (self.present[word] & (bit - 1)).count_ones()) as usize;
        match (self.starts.get(rank), self.starts.get(rank + 1)) {
            (Some(&start), Some(&end)) => start as usize..end as usize,
            _ => 0..0,
        }
    }
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// What matching needs beyond the stored rules; see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Index {
    /// The keyed runs, then the general run.
    entries: Box<[Entry]>,
    by_pair: Directory,
    by_second: Directory,
    by_last: Directory,
    /// `entries[general..]` are tried for every path.
    general: usize,
    /// [`byte_set`] of each rule of `entries[general..]` that has a `*` (0 for the others).
    needs: Box<[u64]>,
}

/// Where a rule goes: its run and its key there.
fn placement(body: &[u8], head_len: usize, anchored: bool) -> (Run, u8) {
    match body {
        [b'/', second, third, ..] if head_len >= 3 => (Run::ByPair, pair(*second, *third)),
        [b'/', second, ..] if head_len >= 2 => (Run::BySecond, *second),
        [.., last] if anchored && *last != b'*' => (Run::ByLast, *last),
        _ => (Run::General, 0),
    }
}

/// The keyed runs, each with 256 keys, then the general run (one key): a rule's bucket.
const BUCKETS: usize = 3 * 256 + 1;

/// The bucket of a rule placed in `run` under `key`.
fn bucket_of(run: Run, key: u8) -> usize {
    match run {
        Run::General => BUCKETS - 1,
        keyed => keyed as usize * 256 + usize::from(key),
    }
}

/// Sorts placed entries by bucket (a counting sort, stable: entries come out of a bucket in
/// the order `order` visits them), each keyed bucket in matching order: the entries, the
/// directories of the three keyed runs, and where the general run starts. `order` is `None`
/// for store order, each bucket then sorted on its own; `Some` when it already is matching
/// order, so no bucket needs a sort.
fn bucket(placed: &[(u16, Entry)], order: Option<&[u32]>) -> (Box<[Entry]>, [Directory; 3], usize) {
    let mut next = [0u32; BUCKETS];
    let mut present = [[0u64; 4]; 3];
    for (bucket, _) in placed {
        let bucket = usize::from(*bucket);
        if let Some(count) = next.get_mut(bucket) {
            *count += 1;
        }
        if let Some(run) = present.get_mut(bucket / 256) {
            let key = bucket % 256;
            run[key / 64] |= 1 << (key % 64);
        }
    }
    // Counts become starts, run by run, present keys only; the general run comes last.
    let mut total = 0u32;
    let directories = [0, 1, 2].map(|run| {
        let counts = &mut next[run * 256..(run + 1) * 256];
        Directory::build(present[run], counts, &mut total)
    });
    let general = total as usize;
    next[BUCKETS - 1] = total;
    let filler = Entry {
        fingerprint: 0,
        order: 0,
        rule: 0,
        head: 0,
    };
    let mut entries = vec![filler; placed.len()];
    let mut put = |&(bucket, entry): &(u16, Entry)| {
        let slot = &mut next[usize::from(bucket)];
        if let Some(place) = entries.get_mut(*slot as usize) {
            *place = entry;
        }
        *slot += 1;
    };
    match order {
        Some(order) => {
            for &position in order {
                if let Some(placed) = placed.get(position as usize) {
                    put(placed);
                }
            }
            return (entries.into_boxed_slice(), directories, general);
        }
        None => placed.iter().for_each(put),
    }
    // Each keyed bucket in matching order, so a check stops at its first match there.
    for directory in &directories {
        for bounds in directory.starts.windows(2) {
            if let Some(bucket) = entries.get_mut(bounds[0] as usize..bounds[1] as usize) {
                if bucket.len() > 1 {
                    bucket.sort_unstable_by_key(|entry| entry.order);
                }
            }
        }
    }
    (entries.into_boxed_slice(), directories, general)
}

/// Groups with at least this many rules are put in matching order by one counting sort
/// before bucketing; smaller ones sort each bucket (mostly one or two rules) on its own.
const COUNTED_ORDER_THRESHOLD: usize = 64;

/// The longest canonical pattern a counting sort takes; a group with a longer one is sorted
/// by comparison (the count table would outgrow the group).
const MAX_COUNTED_LEN: usize = 1024;

/// The store positions of `placed` (its rules' entries, in store order) in matching order
/// ([`RuleStore::order_key`]), by a counting sort on (specificity, kind): `None` for groups
/// below [`COUNTED_ORDER_THRESHOLD`], with a pattern over [`MAX_COUNTED_LEN`], or whose lines
/// are not ascending.
///
/// The store holds rules in file order (lines ascending), and the counting sort is stable, so
/// the line, the key's last part, needs no sorting: one pass to count, one to place, instead
/// of a comparison sort per bucket (large groups put hundreds of rules in one bucket).
fn counted_order(placed: &[(u16, Entry)]) -> Option<Vec<u32>> {
    let rules = placed.len();
    if rules < COUNTED_ORDER_THRESHOLD {
        return None;
    }
    // Everything the sort needs is in the entries' order keys: no second look at the store.
    let parts = |(_, entry): &(u16, Entry)| store::order_parts(entry.order);
    let mut longest = 0;
    let mut last_line = 0;
    for (len, _, line) in placed.iter().map(parts) {
        longest = longest.max(len);
        if line < last_line {
            return None;
        }
        last_line = line;
    }
    if longest > MAX_COUNTED_LEN {
        return None;
    }
    // Key 0 is the best: the longest pattern, allow before disallow.
    let key = |placed: &(u16, Entry)| {
        let (len, disallow, _) = parts(placed);
        (longest - len) * 2 + usize::from(disallow)
    };
    let mut starts = vec![0u32; 2 * longest + 3];
    for placed in placed {
        if let Some(count) = starts.get_mut(key(placed) + 1) {
            *count += 1;
        }
    }
    for key in 1..starts.len() {
        starts[key] += starts[key - 1];
    }
    let mut order = vec![0u32; rules];
    for (position, placed) in placed.iter().enumerate() {
        if let Some(start) = starts.get_mut(key(placed)) {
            if let Some(slot) = order.get_mut(*start as usize) {
                *slot = to_u32(position);
            }
            *start += 1;
        }
    }
    Some(order)
}

impl Index {
    pub(crate) fn build(store: &RuleStore) -> Index {
        let arena = store.arena();
        let bucketed = store.len() > BUCKET_THRESHOLD;
        let mut placed = Vec::with_capacity(store.len());
        for position in 0..store.len() {
            let (start, end) = store.span(position);
            let canonical = arena.get(start..end).unwrap_or_default();
            let (body, anchored) = match canonical.split_last() {
                Some((b'$', body)) => (body, true),
                _ => (canonical, false),
            };
            let star = find_star(arena, start, start + body.len());
            let head_len = star.unwrap_or(body.len());
            let bucket = match bucketed {
                true => {
                    let (run, key) = placement(body, head_len, anchored);
                    bucket_of(run, key) as u16
                }
                false => 0,
            };
            let flags =
                if star.is_some() { WILDCARD } else { 0 } | if anchored { ANCHORED } else { 0 };
            let entry = Entry {
                fingerprint: first_eight(arena.get(start..).unwrap_or_default()),
                order: store.order_key_of(position, end - start),
                rule: to_u32(position),
                head: to_u32(head_len).min(HEAD_LEN) | flags,
            };
            placed.push((bucket, entry));
        }
        let order = counted_order(&placed);
        let (mut entries, directories, general) = if bucketed {
            bucket(&placed, order.as_deref())
        } else {
            // Small groups: every rule is tried.
            let entries = placed.into_iter().map(|(_, entry)| entry).collect();
            (entries, Default::default(), 0)
        };
        // The general run in matching order too, so a check stops at the first entry that
        // cannot beat the best match so far (already so when placed in counted order).
        if let (None, Some(run)) = (&order, entries.get_mut(general..)) {
            if run.len() > 1 {
                run.sort_unstable_by_key(|entry| entry.order);
            }
        }
        let needs = entries[general..]
            .iter()
            .map(|entry| match entry.wildcard() {
                true => byte_set(store.body(entry.rule as usize)),
                false => 0,
            })
            .collect();
        let [by_pair, by_second, by_last] = directories;
        Index {
            entries,
            by_pair,
            by_second,
            by_last,
            general,
            needs,
        }
    }

    /// The position in `store` of the best-ranked rule that matches the canonical `path`.
    pub(crate) fn best(&self, store: &RuleStore, path: &[u8]) -> Option<usize> {
        let mut search = Search {
            store,
            path,
            prefix: first_eight(path),
            has: None,
            best: None,
        };
        if let [b'/', second, rest @ ..] = path {
            if let Some(third) = rest.first() {
                search.run_sorted(&self.entries, self.by_pair.get(pair(*second, *third)));
            }
            search.run_sorted(&self.entries, self.by_second.get(*second));
        }
        if let Some(last) = path.last() {
            search.run_sorted(&self.entries, self.by_last.get(*last));
        }
        search.run(&self.entries, self.general..self.entries.len(), &self.needs);
        search.best.map(|(_, position)| position)
    }
}

/// One check in progress.
struct Search<'a> {
    store: &'a RuleStore,
    path: &'a [u8],
    /// The path's first eight bytes in a word, to compare literal heads a word at a time.
    prefix: u64,
    /// The path's [`byte_set`], worked out when a wildcard rule first needs it.
    has: Option<u64>,
    /// Order key and store position of the best match so far.
    best: Option<(u64, usize)>,
}

impl Search<'_> {
    /// Tries a keyed bucket, `entries[range]`, which is in matching order: up to its first
    /// match, or to the first entry that cannot beat the best so far.
    // Inlined into `best`: three calls per check, and the call cost a sixth of the work.
    #[inline(always)]
    fn run_sorted(&mut self, entries: &[Entry], range: Range<usize>) {
        for entry in entries.get(range).unwrap_or_default() {
            if self.best.is_some_and(|(best, _)| entry.order >= best) {
                return;
            }
            if (self.prefix ^ entry.fingerprint) & entry.mask() == 0 && self.matches(*entry) {
                self.best = Some((entry.order, entry.rule as usize));
                return;
            }
        }
    }

    /// Tries the general run, `entries[range]`, which is in matching order: up to its first
    /// match, or to the first entry that cannot beat the best so far. `needs` holds byte sets
    /// of `entries[range.start..]`.
    fn run(&mut self, entries: &[Entry], range: Range<usize>, needs: &[u64]) {
        let bound = self.best.map_or(u64::MAX, |(best, _)| best);
        for (offset, entry) in entries.get(range).unwrap_or_default().iter().enumerate() {
            if entry.order >= bound {
                return;
            }
            // Most candidates are turned away here, by their first eight bytes.
            if (self.prefix ^ entry.fingerprint) & entry.mask() != 0 {
                continue;
            }
            let need = needs.get(offset).copied().unwrap_or(0);
            if need != 0 && need & !*self.has.get_or_insert_with(|| path_byte_set(self.path)) != 0 {
                continue;
            }
            if self.matches(*entry) {
                self.best = Some((entry.order, entry.rule as usize));
                return;
            }
        }
    }

    /// Whether the rule of `entry`, whose fingerprint admitted the path, matches it.
    // Inlined: called for most candidates, and the call cost a fifth of its work.
    #[inline(always)]
    fn matches(&self, entry: Entry) -> bool {
        let head_len = entry.head_len();
        if self.path.len() < head_len {
            return false;
        }
        let body = self.store.body(entry.rule as usize);
        if !entry.wildcard() {
            // Up to eight bytes, the fingerprint was the whole comparison.
            return (head_len <= 8 || self.path.starts_with(body))
                && (!entry.anchored() || self.path.len() == body.len());
        }
        let last_star = memchr::memrchr(b'*', body).unwrap_or(head_len);
        let shape = Shape::new(entry.anchored(), (head_len, last_star), body.len());
        pattern::matches(body, shape, self.path)
    }
}

/// Where the first `*` of `arena[start..end]` is, counted from `start`.
///
/// Eight bytes at a time, reading past `end` into the next patterns of the arena (a star
/// found there is out of range, and none before it is): a byte loop was a quarter of the
/// index build, and `memchr` costs more than that on a pattern of a few dozen bytes.
fn find_star(arena: &[u8], start: usize, end: usize) -> Option<usize> {
    let stars = splat(b'*');
    let len = end.saturating_sub(start);
    let mut chunks = arena.get(start..).unwrap_or_default().chunks_exact(8);
    let mut offset = 0;
    while offset < len {
        let word = match chunks.next() {
            Some(chunk) => chunk
                .first_chunk::<8>()
                .map_or(0, |bytes| u64::from_le_bytes(*bytes)),
            // The arena's last bytes: zero-padded, and the last word looked at.
            None => first_eight(chunks.remainder()),
        };
        let equal = word ^ stars;
        // The high bit of each zero byte of `equal`; only the lowest one is exact.
        let found = zero_bytes(equal);
        if found != 0 {
            let position = offset + (found.trailing_zeros() / 8) as usize;
            return (position < len).then_some(position);
        }
        offset += 8;
    }
    None
}

/// [`byte_set`] of a canonical path, which never holds a raw `*`.
fn path_byte_set(path: &[u8]) -> u64 {
    path.iter().fold(0, |set, &b| set | 1 << (b & 63))
}

/// A 64-bit summary of which bytes occur in a text (byte value modulo 64): a rule needing a
/// byte the path lacks cannot match, which turns most wildcard rules away cheaply.
fn byte_set(text: &[u8]) -> u64 {
    text.iter()
        .filter(|&&b| b != b'*')
        .fold(0, |set, &b| set | 1 << (b & 63))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::RuleKind;
    use crate::store::RuleStoreBuilder;

    fn store(count: usize) -> RuleStore {
        let mut builder = RuleStoreBuilder::default();
        for line in 0..count {
            // Lengths, kinds, stars and anchors varied so that many rules tie on some.
            let pattern = format!(
                "/{}{}{}",
                "ab".repeat(line % 7),
                if line % 3 == 0 { "*x" } else { "" },
                if line % 5 == 0 { "$" } else { "" }
            );
            let kind = match line % 2 {
                0 => RuleKind::Allow,
                _ => RuleKind::Disallow,
            };
            builder.push(line + 1, kind, pattern.as_bytes());
        }
        builder.finish()
    }

    /// Entries carrying only what the counting sort reads: the order keys.
    fn placed(store: &RuleStore) -> Vec<(u16, Entry)> {
        (0..store.len())
            .map(|position| {
                let entry = Entry {
                    fingerprint: 0,
                    order: store.order_key(position),
                    rule: to_u32(position),
                    head: 0,
                };
                (0, entry)
            })
            .collect()
    }

    #[test]
    fn counted_order_is_matching_order() {
        for count in [COUNTED_ORDER_THRESHOLD, 200] {
            let store = store(count);
            let mut expected: Vec<u32> = (0..count as u32).collect();
            expected.sort_by_key(|&position| store.order_key(position as usize));
            assert_eq!(
                counted_order(&placed(&store)),
                Some(expected),
                "{count} rules"
            );
        }
        let small = store(COUNTED_ORDER_THRESHOLD - 1);
        assert_eq!(counted_order(&placed(&small)), None);
    }

    #[test]
    fn find_star_stays_within_its_pattern() {
        let arena = b"/abcdefghijklmnop*/a/*b*";
        assert_eq!(find_star(arena, 0, 17), None);
        assert_eq!(find_star(arena, 0, 18), Some(17));
        assert_eq!(find_star(arena, 18, 20), None);
        assert_eq!(find_star(arena, 18, 24), Some(3));
        assert_eq!(find_star(arena, 21, 24), Some(0));
        assert_eq!(find_star(arena, 24, 24), None);
        for end in 0..=arena.len() {
            for start in 0..=end {
                let expected = arena[start..end].iter().position(|&b| b == b'*');
                assert_eq!(find_star(arena, start, end), expected, "{start}..{end}");
            }
        }
    }
}
