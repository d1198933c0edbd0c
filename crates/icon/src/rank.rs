//! Which declared icon to try first: the one whose size is closest to [`ICON_SIZE`] from
//! above, then scalable ones (SVG), then unknown sizes, then the largest of the small ones.

use serde::{Deserialize, Serialize};
use url::Url;

use crate::ICON_SIZE;

/// The size an `apple-touch-icon` has when it declares none: Apple's documented default
/// (180 px, the iPhone's).
pub const APPLE_TOUCH_DEFAULT_SIZE: u32 = 180;

/// Which kind of `rel` declared the icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelKind {
    /// `rel="icon"` (or any `rel` with the `icon` token, such as `shortcut icon`).
    Icon,
    /// `rel="apple-touch-icon"` or `apple-touch-icon-precomposed`.
    AppleTouchIcon,
}

impl RelKind {
    /// The kind a `rel` attribute declares, if it declares an icon. Tokens are compared
    /// ASCII case-insensitively; `mask-icon` (a one-colour Safari mask) is not an icon.
    pub fn of(rel: &str) -> Option<RelKind> {
        let mut kind = None;
        for token in rel.split_ascii_whitespace() {
            let token = token.to_ascii_lowercase();
            match token.as_str() {
                "icon" => return Some(RelKind::Icon),
                "apple-touch-icon" | "apple-touch-icon-precomposed" => {
                    kind = Some(RelKind::AppleTouchIcon)
                }
                _ => {}
            }
        }
        kind
    }
}

/// The size an icon link declares, as far as ranking goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "px")]
pub enum DeclaredSize {
    /// The largest side, in pixels, of the best size listed in `sizes`.
    Pixels(u32),
    /// `sizes="any"`, an SVG `type` or an `.svg` path: renders at any size.
    Scalable,
    /// Nothing said.
    Unknown,
}

/// One declared icon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IconLink {
    /// The icon's absolute URL (`http` or `https`).
    pub url: Url,
    /// The `rel` that declared it.
    pub rel: RelKind,
    /// Its size, as declared.
    pub size: DeclaredSize,
    /// The `type` attribute, trimmed and lower case, if any.
    pub mime: Option<String>,
}

impl IconLink {
    /// An icon link from its attributes as written.
    pub fn new(url: Url, rel: RelKind, sizes: Option<&str>, mime: Option<&str>) -> IconLink {
        let mime = mime
            .map(|m| m.trim().to_ascii_lowercase())
            .filter(|m| !m.is_empty());
        let svg = mime.as_deref() == Some("image/svg+xml")
            || url.path().to_ascii_lowercase().ends_with(".svg");
        let size = match sizes.map(parse_sizes) {
            Some(DeclaredSize::Scalable) => DeclaredSize::Scalable,
            _ if svg => DeclaredSize::Scalable,
            Some(DeclaredSize::Pixels(px)) => DeclaredSize::Pixels(px),
            _ if rel == RelKind::AppleTouchIcon => DeclaredSize::Pixels(APPLE_TOUCH_DEFAULT_SIZE),
            _ => DeclaredSize::Unknown,
        };
        IconLink {
            url,
            rel,
            size,
            mime,
        }
    }

    /// Whether the `type` names a format [`decode_icon`](crate::decode_icon) cannot read
    /// (such icons are tried last).
    pub fn unsupported_type(&self) -> bool {
        self.mime.as_deref().is_some_and(|mime| {
            !matches!(
                mime,
                "image/x-icon"
                    | "image/vnd.microsoft.icon"
                    | "image/ico"
                    | "image/icon"
                    | "image/png"
                    | "image/gif"
                    | "image/jpeg"
                    | "image/jpg"
                    | "image/pjpeg"
                    | "image/webp"
                    | "image/svg+xml"
            )
        })
    }

    /// The ranking key: lower is better.
    fn key(&self) -> (bool, u8, u32) {
        let (tier, within) = match self.size {
            DeclaredSize::Pixels(px) if px >= ICON_SIZE => (0, px),
            DeclaredSize::Scalable => (1, 0),
            DeclaredSize::Unknown => (2, 0),
            DeclaredSize::Pixels(px) => (3, ICON_SIZE - px),
        };
        (self.unsupported_type(), tier, within)
    }
}

/// The `sizes` attribute read: `any` wins; otherwise the listed size (`WxH`, `x` in either
/// case, largest side) closest to [`ICON_SIZE`] from above, else the largest; nothing
/// readable is [`DeclaredSize::Unknown`].
pub fn parse_sizes(sizes: &str) -> DeclaredSize {
    let mut best: Option<u32> = None;
    for token in sizes.split_ascii_whitespace() {
        if token.eq_ignore_ascii_case("any") {
            return DeclaredSize::Scalable;
        }
        let Some((w, h)) = token.split_once(['x', 'X']) else {
            continue;
        };
        let (Ok(w), Ok(h)) = (w.parse::<u32>(), h.parse::<u32>()) else {
            continue;
        };
        let px = w.max(h);
        if px == 0 {
            continue;
        }
        best = Some(match best {
            None => px,
            Some(b) if b >= ICON_SIZE && px >= ICON_SIZE => b.min(px),
            Some(b) => b.max(px),
        });
    }
    best.map_or(DeclaredSize::Unknown, DeclaredSize::Pixels)
}

/// `links` best first: sizes of at least [`ICON_SIZE`] (closest first), then scalable, then
/// unknown sizes, then smaller ones (largest first); a `type` that cannot be decoded goes
/// last. Ties keep document order; a URL declared twice is kept once, at its best place.
pub fn rank(mut links: Vec<IconLink>) -> Vec<IconLink> {
    links.sort_by_key(IconLink::key);
    let mut seen = std::collections::HashSet::new();
    links.retain(|link| seen.insert(link.url.clone()));
    links
}
