//! How one crawler's rules are stored: two text arenas and a small record per rule.

use crate::rule::{self, Rule, RuleKind};

/// One stored rule: offsets into the two text arenas of its [`RuleStore`]. Kept small, because
/// parsing writes one per rule; what only matching needs lives in the matching index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompactRule {
    pub(crate) line: u32,
    pub(crate) kind: RuleKind,
    /// Whether the pattern ended in `$` (which follows the body in the arena).
    pub(crate) anchored: bool,
    /// Canonical body in [`RuleStore::canonical`], without the anchor.
    pub(crate) body: (u32, u32),
    /// Pattern as written in [`RuleStore::written`]; [`SAME_AS_CANONICAL`] when it was already
    /// canonical, and so is the canonical text itself (anchor included).
    written: (u32, u32),
}

/// [`CompactRule::written`] of a rule written in canonical form.
const SAME_AS_CANONICAL: (u32, u32) = (u32::MAX, u32::MAX);

impl CompactRule {
    /// Length of the canonical pattern, anchor included.
    pub(crate) fn specificity(&self) -> u32 {
        (self.body.1 - self.body.0).saturating_add(u32::from(self.anchored))
    }

    /// Matching order: most specific first, then allow before disallow, then file order.
    pub(crate) fn order_key(&self) -> u64 {
        let specificity = u64::from(u32::MAX - self.specificity());
        let disallow = u64::from(self.kind == RuleKind::Disallow);
        specificity << 32 | disallow << 31 | u64::from(self.line.min(u32::MAX >> 1))
    }
}

fn span(start: usize, end: usize) -> (u32, u32) {
    // Bodies come from at most MAX_ROBOTS_TXT_BYTES of input (canonical form at most triples it).
    (
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

pub(crate) fn line_u32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// Collects rules into the arenas of a [`RuleStore`].
#[derive(Default)]
pub(crate) struct RuleStoreBuilder {
    canonical: Vec<u8>,
    written: String,
    rules: Vec<CompactRule>,
}

impl RuleStoreBuilder {
    /// Adds a rule whose value starts with `/` or `*`.
    pub(crate) fn push(&mut self, line: usize, kind: RuleKind, value: &[u8]) {
        let start = self.canonical.len();
        rule::push_canonical_pattern(value, &mut self.canonical);
        let written = if &self.canonical[start..] == value {
            SAME_AS_CANONICAL
        } else {
            let written_start = self.written.len();
            match std::str::from_utf8(value) {
                Ok(text) => self.written.push_str(text),
                Err(_) => self.written.push_str(&String::from_utf8_lossy(value)),
            }
            span(written_start, self.written.len())
        };
        self.push_canonical(line, kind, start, written);
    }

    /// Adds an already compiled rule.
    pub(crate) fn push_rule(&mut self, rule: &Rule) {
        let start = self.canonical.len();
        self.canonical.extend_from_slice(rule.body());
        if rule.anchored() {
            self.canonical.push(b'$');
        }
        let written = if rule.pattern.as_bytes() == &self.canonical[start..] {
            SAME_AS_CANONICAL
        } else {
            let written_start = self.written.len();
            self.written.push_str(&rule.pattern);
            span(written_start, self.written.len())
        };
        self.push_canonical(rule.line, rule.kind, start, written);
    }

    /// Records the canonical pattern that starts at `start` and runs to the arena's end.
    fn push_canonical(&mut self, line: usize, kind: RuleKind, start: usize, written: (u32, u32)) {
        // In canonical form a raw `$` only ever ends a pattern, as its anchor.
        let anchored = self.canonical.last() == Some(&b'$') && self.canonical.len() > start;
        let body_end = self.canonical.len() - usize::from(anchored);
        self.rules.push(CompactRule {
            line: line_u32(line),
            kind,
            anchored,
            body: span(start, body_end),
            written,
        });
    }

    /// Seals the arenas.
    pub(crate) fn finish(self) -> RuleStore {
        // Canonical text is ASCII, so this never falls back.
        let canonical = String::from_utf8(self.canonical)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        RuleStore {
            canonical,
            written: self.written,
            rules: self.rules,
        }
    }
}

/// One crawler's rules in file order (no sort at parse time: a check keeps the best-ranked
/// match by [`CompactRule::order_key`], which saves parse time).
#[derive(Debug, Clone, Default)]
pub(crate) struct RuleStore {
    /// Canonical rule patterns (with their anchors), back to back.
    canonical: String,
    /// Rule patterns as written, back to back (only those not written canonically).
    written: String,
    rules: Vec<CompactRule>,
}

impl RuleStore {
    pub(crate) fn rules(&self) -> &[CompactRule] {
        &self.rules
    }

    /// The canonical arena.
    pub(crate) fn canonical(&self) -> &[u8] {
        self.canonical.as_bytes()
    }

    /// A rule's canonical body, without the anchor.
    pub(crate) fn body(&self, rule: &CompactRule) -> &[u8] {
        self.canonical
            .as_bytes()
            .get(rule.body.0 as usize..rule.body.1 as usize)
            .unwrap_or_default()
    }

    /// A rule's pattern as written.
    pub(crate) fn pattern(&self, rule: &CompactRule) -> &str {
        if rule.written == SAME_AS_CANONICAL {
            let end = rule.body.1 as usize + usize::from(rule.anchored);
            self.canonical.get(rule.body.0 as usize..end)
        } else {
            self.written
                .get(rule.written.0 as usize..rule.written.1 as usize)
        }
        .unwrap_or_default()
    }
}
