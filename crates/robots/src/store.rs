//! How one crawler's rules are stored: one arena of canonical patterns and 8 bytes per rule.
//!
//! Memory matters here (a crawler keeps the rules of every site it visits): the patterns are
//! stored back to back in one exactly-sized arena, each rule is its start offset and its line
//! and kind (its pattern runs to the next rule's start), and the pattern as written is only
//! kept, in a second arena, for the few rules not written in canonical form.

use crate::rule::{self, Rule, RuleKind};

/// One stored rule: where its canonical pattern (anchor included) starts in the arena, and its
/// line and kind.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompactRule {
    start: u32,
    /// The line, shifted left by one; the low bit is set for a disallow.
    line_kind: u32,
}

fn to_u32(value: usize) -> u32 {
    // Offsets and lines come from at most MAX_ROBOTS_TXT_BYTES of input (the canonical form
    // at most triples it), far below u32::MAX.
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Rules a builder makes room for on its first rule (and 24 bytes of pattern each).
const FIRST_RULES: usize = 128;

/// Collects rules into a [`RuleStore`].
#[derive(Default)]
pub(crate) struct RuleStoreBuilder {
    canonical: Vec<u8>,
    rules: Vec<CompactRule>,
    written: String,
    /// `(rule position, start in written)` of the rules not written canonically, ascending.
    written_spans: Vec<(u32, u32)>,
}

impl RuleStoreBuilder {
    fn push_record(&mut self, line: usize, kind: RuleKind, start: usize) {
        let disallow = u32::from(kind == RuleKind::Disallow);
        self.rules.push(CompactRule {
            start: to_u32(start),
            line_kind: to_u32(line).min(u32::MAX >> 1) << 1 | disallow,
        });
    }

    fn push_written(&mut self, text: &str) {
        let position = to_u32(self.rules.len());
        self.written_spans
            .push((position, to_u32(self.written.len())));
        self.written.push_str(text);
    }

    /// Adds a rule whose value starts with `/` or `*`.
    pub(crate) fn push(&mut self, line: usize, kind: RuleKind, value: &[u8]) {
        if self.rules.capacity() == 0 {
            // Growing from nothing reallocated a dozen times for a group of a hundred rules;
            // `finish` gives back what is not used.
            self.rules.reserve(FIRST_RULES);
            self.canonical.reserve(FIRST_RULES * 24);
        }
        let start = self.canonical.len();
        if !rule::push_canonical_pattern(value, &mut self.canonical) {
            match std::str::from_utf8(value) {
                Ok(text) => self.push_written(text),
                Err(_) => self.push_written(&String::from_utf8_lossy(value)),
            }
        }
        self.push_record(line, kind, start);
    }

    /// Adds an already compiled rule.
    pub(crate) fn push_rule(&mut self, rule: &Rule) {
        let start = self.canonical.len();
        self.canonical.extend_from_slice(rule.body());
        if rule.anchored() {
            self.canonical.push(b'$');
        }
        if rule.pattern.as_bytes() != &self.canonical[start..] {
            self.push_written(&rule.pattern);
        }
        self.push_record(rule.line, rule.kind, start);
    }

    /// Seals the store, every part exactly sized.
    pub(crate) fn finish(self) -> RuleStore {
        // Canonical text is ASCII, so this never falls back. Validated here, once per parse,
        // rather than per decision (`pattern` hands out `&str`): checking each decision's
        // pattern cost the check three times what this costs the parse.
        let canonical = String::from_utf8(self.canonical)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        RuleStore {
            canonical: canonical.into_boxed_str(),
            rules: self.rules.into_boxed_slice(),
            written: self.written.into_boxed_str(),
            written_spans: self.written_spans.into_boxed_slice(),
        }
    }
}

/// What an order key ([`RuleStore::order_key`]) is made of: the canonical pattern's length,
/// whether the rule is a disallow, and its line.
pub(crate) fn order_parts(key: u64) -> (usize, bool, usize) {
    let specificity = (u32::MAX - (key >> 32) as u32) as usize;
    let line_kind = key as u32;
    (
        specificity,
        line_kind >> 31 == 1,
        (line_kind & (u32::MAX >> 1)) as usize,
    )
}

/// One crawler's rules in file order (no sort at parse time: the matching index orders them
/// when it is built, on the first check).
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleStore {
    /// Canonical rule patterns (with their anchors), back to back.
    canonical: Box<str>,
    rules: Box<[CompactRule]>,
    /// Rule patterns as written, back to back (only those not written canonically).
    written: Box<str>,
    written_spans: Box<[(u32, u32)]>,
}

impl RuleStore {
    /// How many rules.
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// The canonical arena.
    pub(crate) fn arena(&self) -> &[u8] {
        self.canonical.as_bytes()
    }

    /// Where rule `position`'s canonical pattern (anchor included) lies in the arena.
    pub(crate) fn span(&self, position: usize) -> (usize, usize) {
        let start = self
            .rules
            .get(position)
            .map_or(0, |rule| rule.start as usize);
        let end = self
            .rules
            .get(position + 1)
            .map_or(self.canonical.len(), |next| next.start as usize);
        (start, end)
    }

    /// Rule `position`'s canonical pattern, anchor included.
    pub(crate) fn canonical(&self, position: usize) -> &[u8] {
        let (start, end) = self.span(position);
        self.arena().get(start..end).unwrap_or_default()
    }

    /// Rule `position`'s canonical body, without the anchor.
    pub(crate) fn body(&self, position: usize) -> &[u8] {
        let canonical = self.canonical(position);
        canonical.strip_suffix(b"$").unwrap_or(canonical)
    }

    pub(crate) fn line(&self, position: usize) -> usize {
        self.rules
            .get(position)
            .map_or(0, |rule| (rule.line_kind >> 1) as usize)
    }

    pub(crate) fn kind(&self, position: usize) -> RuleKind {
        match self.rules.get(position).map(|rule| rule.line_kind & 1) {
            Some(1) => RuleKind::Disallow,
            _ => RuleKind::Allow,
        }
    }

    /// Matching order: most specific first (the longest canonical pattern, anchor included),
    /// then allow before disallow, then file order. Smaller is better.
    pub(crate) fn order_key(&self, position: usize) -> u64 {
        let (start, end) = self.span(position);
        self.order_key_of(position, end - start)
    }

    /// [`RuleStore::order_key`] of rule `position`, whose canonical pattern is `len` bytes
    /// long (for callers that already have its span).
    pub(crate) fn order_key_of(&self, position: usize, len: usize) -> u64 {
        let specificity = u64::from(u32::MAX - to_u32(len));
        let line_kind = self.rules.get(position).map_or(0, |rule| rule.line_kind);
        // The kind is the low bit of `line_kind`: swapping halves puts it above the line.
        specificity << 32 | u64::from(line_kind.rotate_right(1))
    }

    /// Rule `position`'s pattern as written.
    pub(crate) fn pattern(&self, position: usize) -> &str {
        if self.written_spans.is_empty() {
            // Nearly every store: all its rules were written canonically.
            let (start, end) = self.span(position);
            return self.canonical.get(start..end).unwrap_or_default();
        }
        let Some(position) = u32::try_from(position).ok() else {
            return "";
        };
        match self
            .written_spans
            .binary_search_by_key(&position, |(rule, _)| *rule)
        {
            Ok(at) => {
                let start = self.written_spans[at].1 as usize;
                let end = self
                    .written_spans
                    .get(at + 1)
                    .map_or(self.written.len(), |(_, next)| *next as usize);
                self.written.get(start..end).unwrap_or_default()
            }
            Err(_) => {
                let (start, end) = self.span(position as usize);
                self.canonical.get(start..end).unwrap_or_default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_key_gives_back_its_parts() {
        let mut builder = RuleStoreBuilder::default();
        builder.push(3, RuleKind::Disallow, b"/a*b$");
        builder.push(9, RuleKind::Allow, b"/%c3%a5");
        builder.push(12, RuleKind::Disallow, b"*");
        let store = builder.finish();
        for position in 0..store.len() {
            let key = store.order_key(position);
            let parts = (
                store.canonical(position).len(),
                store.kind(position) == RuleKind::Disallow,
                store.line(position),
            );
            assert_eq!(order_parts(key), parts, "rule {position}");
        }
    }
}
