//! SVG icons: parsed with roxmltree under a node limit (entities expanded count, so a
//! "billion laughs" is refused), checked for the size of the drawing with every reference
//! expanded, then rendered by resvg straight onto the 64×64 canvas. Nothing external is ever
//! loaded: no files, no URLs, no fonts, no embedded raster images.

use std::collections::{HashMap, HashSet};

use image::RgbaImage;
use roxmltree::{Document, Node, NodeId, ParsingOptions};

use crate::error::IconError;
use crate::limits::ICON_SIZE;
use crate::png::Png64;

/// The most XML nodes an SVG may have, entities expanded (roxmltree's `nodes_limit`), and the
/// most elements its drawing may have once every reference (`<use>`, `href="#id"`,
/// `url(#id)`) is expanded: an icon has tens or hundreds.
pub const MAX_SVG_NODES: usize = 20_000;

/// The deepest nesting of an SVG's drawing, references expanded: renderers recurse per level,
/// and a deeper tree could exhaust the stack.
pub const MAX_SVG_DEPTH: usize = 128;

/// What a `<filter>`, `<mask>` or `<pattern>` counts for against [`MAX_SVG_NODES`] each time
/// it is used: each use draws an offscreen layer and processes it (2,000 blurred circles took
/// seconds before this weight refused them).
pub const SVG_LAYER_COST: usize = 100;

/// Whether the element draws an offscreen layer each time it is used.
fn draws_a_layer(node: Node<'_, '_>) -> bool {
    matches!(node.tag_name().name(), "filter" | "mask" | "pattern")
}

/// Whether `bytes` start like an SVG document (after a BOM and white space).
pub(crate) fn looks_like_svg(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let head = &bytes[start..bytes.len().min(start + 512)];
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let prologue = text.starts_with("<?xml") || text.starts_with("<!--");
    text.starts_with("<svg")
        || text.starts_with("<!doctype svg")
        || (prologue && text.contains("<svg"))
}

/// Renders an SVG icon onto the 64×64 canvas, aspect kept, centred.
pub(crate) fn render(bytes: &[u8]) -> Result<Png64, IconError> {
    let text = std::str::from_utf8(bytes).map_err(|_| IconError::SvgNotText)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let parsing = ParsingOptions {
        allow_dtd: true,
        nodes_limit: u32::try_from(MAX_SVG_NODES).unwrap_or(u32::MAX),
    };
    let document = Document::parse_with_options(text, parsing).map_err(IconError::SvgXml)?;
    check_expansion(&document)?;
    let tree = usvg::Tree::from_xmltree(&document, &options()).map_err(IconError::Svg)?;
    Png64::encode(&rasterise(&tree)?).map_err(IconError::Encode)
}

/// usvg options that load nothing: no resource directory, no fonts (text is not drawn), and
/// an `<image>` resolver that refuses every `href` (data URLs included: an embedded raster
/// would be decoded outside our limits).
fn options() -> usvg::Options<'static> {
    usvg::Options {
        resources_dir: None,
        image_href_resolver: usvg::ImageHrefResolver {
            resolve_data: Box::new(|_, _, _| None),
            resolve_string: Box::new(|_, _| None),
        },
        ..usvg::Options::default()
    }
}

fn rasterise(tree: &usvg::Tree) -> Result<RgbaImage, IconError> {
    let size = tree.size();
    let longest = size.width().max(size.height());
    let side = ICON_SIZE as f32;
    let scale = side / longest;
    let dx = (side - size.width() * scale) / 2.0;
    let dy = (side - size.height() * scale) / 2.0;
    let mut pixmap = tiny_skia::Pixmap::new(ICON_SIZE, ICON_SIZE).ok_or(IconError::NoPixels)?;
    let transform = tiny_skia::Transform::from_row(scale, 0.0, 0.0, scale, dx, dy);
    resvg::render(tree, transform, &mut pixmap.as_mut());
    // tiny-skia keeps premultiplied alpha; PNG wants it straight.
    let pixels = pixmap
        .pixels()
        .iter()
        .flat_map(|pixel| {
            let c = pixel.demultiply();
            [c.red(), c.green(), c.blue(), c.alpha()]
        })
        .collect();
    RgbaImage::from_raw(ICON_SIZE, ICON_SIZE, pixels).ok_or(IconError::NoPixels)
}

/// The `#id` targets an element refers to, each with how many times it is drawn:
/// `href`/`xlink:href="#id"` (`<use>`, patterns and gradients inheriting, `<feImage>`) and
/// `url(#id)` in any attribute (fills, clip paths, masks, filters) once; a marker once per
/// vertex of every shape it reaches (markers are inherited: set on a `<g>`, they are drawn
/// on each path inside it), `marker_vertices` giving that count per element.
fn references<'a>(
    node: Node<'a, 'a>,
    marker_vertices: &HashMap<NodeId, usize>,
) -> Vec<(&'a str, usize)> {
    let mut ids = Vec::new();
    for attribute in node.attributes() {
        let value = attribute.value();
        if attribute.name() == "href" {
            if let Some(id) = value.trim().strip_prefix('#') {
                ids.push((id, 1));
            }
        }
        let times = if mentions_markers(attribute.name(), value) {
            marker_vertices.get(&node.id()).copied().unwrap_or(1)
        } else {
            1
        };
        ids.extend(url_ids(value).map(|id| (id, times)));
    }
    ids
}

/// Whether an attribute (`marker-mid`, or a `style` naming one) may place markers.
fn mentions_markers(name: &str, value: &str) -> bool {
    name.starts_with("marker") || (name == "style" && value.contains("marker"))
}

/// For every element, the vertices of the shapes in its subtree (itself included): where a
/// marker set on it is drawn. One pass from the last element to the first, each adding its
/// total to its parent's, so a deep tree costs no more than a flat one.
fn subtree_vertices(document: &Document) -> HashMap<NodeId, usize> {
    let elements: Vec<Node> = document.descendants().filter(Node::is_element).collect();
    let mut totals: HashMap<NodeId, usize> = elements
        .iter()
        .map(|node| (node.id(), vertices(*node)))
        .collect();
    for node in elements.iter().rev() {
        let own = totals.get(&node.id()).copied().unwrap_or(0);
        if let Some(parent) = node.parent_element() {
            let total = totals.entry(parent.id()).or_insert(0);
            *total = total.saturating_add(own);
        }
    }
    totals
}

/// An upper bound of the vertices of an element's shape (where markers are drawn): the
/// numbers in its `d` or `points`, halved; at least 1 for a shape, 0 for anything else.
/// Numbers are counted as a path parser reads them: `0.1.1.1` is three numbers (a second
/// point starts a new one), `1-2` two.
fn vertices(node: Node<'_, '_>) -> usize {
    let Some(data) = node.attribute("d").or_else(|| node.attribute("points")) else {
        return usize::from(is_shape(node));
    };
    (count_numbers(data) / 2).max(1)
}

/// Whether the element is a basic shape markers can be drawn on.
fn is_shape(node: Node<'_, '_>) -> bool {
    matches!(
        node.tag_name().name(),
        "path" | "line" | "polyline" | "polygon" | "rect" | "circle" | "ellipse"
    )
}

/// How many numbers `data` holds, read as SVG path data: a number starts at a digit or a
/// point after anything that is not part of a number, at a point when the number already
/// has one (or an exponent), and at a sign not following an exponent's `e`.
fn count_numbers(data: &str) -> usize {
    let mut numbers = 0usize;
    let (mut in_number, mut has_point, mut previous) = (false, false, b' ');
    for byte in data.bytes() {
        match byte {
            b'0'..=b'9' => {
                if !in_number {
                    numbers += 1;
                    (in_number, has_point) = (true, false);
                }
            }
            b'.' => {
                if !in_number || has_point {
                    numbers += 1;
                }
                (in_number, has_point) = (true, true);
            }
            b'e' | b'E' if in_number => has_point = true,
            b'-' | b'+' if in_number && matches!(previous, b'e' | b'E') => {}
            _ => in_number = false,
        }
        previous = byte;
    }
    numbers
}

/// The ids of every `url(#id)` in `text`.
fn url_ids(text: &str) -> impl Iterator<Item = &str> {
    text.split("url(").skip(1).filter_map(|rest| {
        let rest = rest.trim_start().trim_start_matches(['"', '\'']);
        let id = rest.strip_prefix('#')?;
        let end = id.find([')', '"', '\'']).unwrap_or(id.len());
        Some(id[..end].trim())
    })
}

/// The size of the drawing with every reference expanded, refused past [`MAX_SVG_NODES`]
/// elements or [`MAX_SVG_DEPTH`] levels, or on a reference cycle. A stylesheet's `url(#id)`
/// (in `<style>`) may apply to any element, so every element is counted as using each (once
/// per vertex when the stylesheet places markers).
fn check_expansion(document: &Document) -> Result<(), IconError> {
    let too_complex = || IconError::SvgTooComplex {
        limit: MAX_SVG_NODES,
    };
    let ids: HashMap<&str, Node> = document
        .descendants()
        .filter_map(|node| node.attribute("id").map(|id| (id, node)))
        .collect();
    let marker_vertices = subtree_vertices(document);
    let cost = expanded_costs(document, &ids, &marker_vertices).ok_or_else(too_complex)?;
    let stylesheets: Vec<&str> = document
        .descendants()
        .filter(|node| node.has_tag_name("style"))
        .flat_map(|style| style.children().filter_map(|text| text.text()))
        .collect();
    let styled = stylesheets
        .iter()
        .flat_map(|text| url_ids(text))
        .filter_map(|id| ids.get(id))
        .map(|target| cost.get(&target.id()).map_or(0, |c| c.0))
        .fold(0usize, usize::saturating_add);
    let markers = stylesheets.iter().any(|text| text.contains("marker"));
    let uses = document
        .descendants()
        .filter(Node::is_element)
        .map(|node| if markers { vertices(node).max(1) } else { 1 })
        .fold(0usize, usize::saturating_add);
    let root = cost.get(&document.root_element().id()).map_or(0, |c| c.0);
    if root.saturating_add(uses.saturating_mul(styled)) > MAX_SVG_NODES {
        return Err(too_complex());
    }
    Ok(())
}

/// (elements, depth) of each element with its children and references expanded, by an
/// iterative depth-first walk (a hostile document cannot exhaust the stack here) memoised
/// per element; `None` past the limits or on a cycle.
fn expanded_costs(
    document: &Document,
    ids: &HashMap<&str, Node>,
    marker_vertices: &HashMap<NodeId, usize>,
) -> Option<HashMap<NodeId, (usize, usize)>> {
    // Each dependency with how many times it is drawn.
    let dependencies = |node: Node<'_, '_>| -> Vec<(NodeId, usize)> {
        let referred = references(node, marker_vertices)
            .into_iter()
            .filter_map(|(id, times)| ids.get(id).map(|target| (target.id(), times)));
        node.children()
            .filter(Node::is_element)
            .map(|child| (child.id(), 1))
            .chain(referred)
            .collect()
    };
    let mut cost: HashMap<NodeId, (usize, usize)> = HashMap::new();
    let mut on_path: HashSet<NodeId> = HashSet::new();
    let mut stack = vec![(document.root_element().id(), false)];
    while let Some((id, children_done)) = stack.pop() {
        if cost.contains_key(&id) {
            continue;
        }
        let node = document.get_node(id)?;
        let deps = dependencies(node);
        if !children_done {
            on_path.insert(id);
            stack.push((id, true));
            for (dep, _) in deps.iter().filter(|(dep, _)| !cost.contains_key(dep)) {
                if on_path.contains(dep) {
                    return None;
                }
                stack.push((*dep, false));
            }
            continue;
        }
        let own = if draws_a_layer(node) {
            SVG_LAYER_COST
        } else {
            1
        };
        let (mut elements, mut depth) = (own, 0usize);
        for (dep, times) in &deps {
            let (n, d) = cost.get(dep).copied().unwrap_or((0, 0));
            elements = elements.saturating_add(n.saturating_mul(*times));
            depth = depth.max(d);
        }
        if elements > MAX_SVG_NODES || depth + 1 > MAX_SVG_DEPTH {
            return None;
        }
        cost.insert(id, (elements, depth + 1));
        on_path.remove(&id);
    }
    Some(cost)
}
