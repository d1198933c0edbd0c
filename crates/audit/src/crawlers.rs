//! A built-in directory of notable crawlers, and what a robots.txt lets each of them fetch.

use std::collections::HashMap;

use robots::{AgentRules, Explanation, GroupSelection, ProductTokens, RobotsTxt};
use serde::{Deserialize, Serialize};

/// What a crawler is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A search engine's crawler.
    Search,
    /// Collects content to train AI models (or a token that controls that use).
    AiTraining,
    /// Crawls for an AI search or answer engine.
    AiSearch,
    /// Fetches a page when a person asks an AI assistant to.
    AiUserFetch,
    /// Crawls for an SEO tool's link index.
    SeoTool,
    /// Fetches link previews for a social network or messenger.
    SocialPreview,
    /// Advertising quality checks.
    Ads,
    /// This analysis bot.
    Analysis,
}

impl Purpose {
    /// A short human label.
    pub fn label(self) -> &'static str {
        match self {
            Purpose::Search => "search",
            Purpose::AiTraining => "AI training",
            Purpose::AiSearch => "AI search",
            Purpose::AiUserFetch => "AI user fetch",
            Purpose::SeoTool => "SEO tool",
            Purpose::SocialPreview => "social preview",
            Purpose::Ads => "ads",
            Purpose::Analysis => "analysis",
        }
    }
}

/// One notable crawler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crawler {
    /// Its product token, as its operator documents it.
    pub token: &'static str,
    /// Who runs it.
    pub operator: &'static str,
    /// What it is for.
    pub purpose: Purpose,
    /// The tokens it looks for, in order (its own first), before `*`.
    pub chain: &'static [&'static str],
    /// Whether it ignores the `*` group (it obeys only groups that name it).
    pub ignores_global: bool,
    /// Whether it is a major search engine, whose exclusion is almost always a mistake.
    pub major: bool,
}

const fn crawler(
    token: &'static str,
    operator: &'static str,
    purpose: Purpose,
    chain: &'static [&'static str],
) -> Crawler {
    Crawler {
        token,
        operator,
        purpose,
        chain,
        ignores_global: false,
        major: false,
    }
}

const fn major(mut c: Crawler) -> Crawler {
    c.major = true;
    c
}

const fn ignores_global(mut c: Crawler) -> Crawler {
    c.ignores_global = true;
    c
}

/// The bot's own product token.
pub const BOT_TOKEN: &str = "RobotsTxtParser";

/// The bot's own product token as the engine takes it.
pub const BOT_TOKENS: ProductTokens = ProductTokens::from_static(&[BOT_TOKEN]);

/// The directory, grouped by purpose.
pub const CRAWLERS: &[Crawler] = &[
    crawler(
        BOT_TOKEN,
        "RobotsTxtParser",
        Purpose::Analysis,
        &[BOT_TOKEN],
    ),
    // Search engines.
    major(crawler(
        "Googlebot",
        "Google",
        Purpose::Search,
        &["Googlebot"],
    )),
    crawler(
        "Googlebot-Image",
        "Google",
        Purpose::Search,
        &["Googlebot-Image", "Googlebot"],
    ),
    crawler(
        "Googlebot-News",
        "Google",
        Purpose::Search,
        &["Googlebot-News", "Googlebot"],
    ),
    crawler(
        "Googlebot-Video",
        "Google",
        Purpose::Search,
        &["Googlebot-Video", "Googlebot"],
    ),
    crawler(
        "Storebot-Google",
        "Google",
        Purpose::Search,
        &["Storebot-Google", "Googlebot"],
    ),
    major(crawler(
        "Bingbot",
        "Microsoft",
        Purpose::Search,
        &["Bingbot", "msnbot"],
    )),
    crawler(
        "Applebot",
        "Apple",
        Purpose::Search,
        &["Applebot", "Googlebot"],
    ),
    crawler(
        "DuckDuckBot",
        "DuckDuckGo",
        Purpose::Search,
        &["DuckDuckBot"],
    ),
    crawler(
        "YandexBot",
        "Yandex",
        Purpose::Search,
        &["YandexBot", "Yandex"],
    ),
    crawler("Baiduspider", "Baidu", Purpose::Search, &["Baiduspider"]),
    crawler("Yeti", "Naver", Purpose::Search, &["Yeti"]),
    crawler("SeznamBot", "Seznam", Purpose::Search, &["SeznamBot"]),
    crawler("Slurp", "Yahoo", Purpose::Search, &["Slurp"]),
    crawler("PetalBot", "Huawei", Purpose::Search, &["PetalBot"]),
    // Advertising: these ignore `*`.
    ignores_global(crawler(
        "AdsBot-Google",
        "Google",
        Purpose::Ads,
        &["AdsBot-Google"],
    )),
    ignores_global(crawler(
        "AdsBot-Google-Mobile",
        "Google",
        Purpose::Ads,
        &["AdsBot-Google-Mobile"],
    )),
    ignores_global(crawler(
        "Mediapartners-Google",
        "Google",
        Purpose::Ads,
        &["Mediapartners-Google"],
    )),
    // AI training.
    crawler("GPTBot", "OpenAI", Purpose::AiTraining, &["GPTBot"]),
    crawler(
        "ClaudeBot",
        "Anthropic",
        Purpose::AiTraining,
        &["ClaudeBot"],
    ),
    crawler(
        "Google-Extended",
        "Google",
        Purpose::AiTraining,
        &["Google-Extended"],
    ),
    crawler(
        "Applebot-Extended",
        "Apple",
        Purpose::AiTraining,
        &["Applebot-Extended"],
    ),
    crawler("CCBot", "Common Crawl", Purpose::AiTraining, &["CCBot"]),
    crawler(
        "Meta-ExternalAgent",
        "Meta",
        Purpose::AiTraining,
        &["Meta-ExternalAgent"],
    ),
    crawler(
        "Bytespider",
        "ByteDance",
        Purpose::AiTraining,
        &["Bytespider"],
    ),
    crawler("Amazonbot", "Amazon", Purpose::AiTraining, &["Amazonbot"]),
    crawler(
        "cohere-training-data-crawler",
        "Cohere",
        Purpose::AiTraining,
        &["cohere-training-data-crawler"],
    ),
    // AI search.
    crawler(
        "OAI-SearchBot",
        "OpenAI",
        Purpose::AiSearch,
        &["OAI-SearchBot"],
    ),
    crawler(
        "Claude-SearchBot",
        "Anthropic",
        Purpose::AiSearch,
        &["Claude-SearchBot"],
    ),
    crawler(
        "PerplexityBot",
        "Perplexity",
        Purpose::AiSearch,
        &["PerplexityBot"],
    ),
    // AI user-triggered fetchers.
    crawler(
        "ChatGPT-User",
        "OpenAI",
        Purpose::AiUserFetch,
        &["ChatGPT-User"],
    ),
    crawler(
        "Claude-User",
        "Anthropic",
        Purpose::AiUserFetch,
        &["Claude-User"],
    ),
    crawler(
        "Perplexity-User",
        "Perplexity",
        Purpose::AiUserFetch,
        &["Perplexity-User"],
    ),
    crawler(
        "Meta-ExternalFetcher",
        "Meta",
        Purpose::AiUserFetch,
        &["Meta-ExternalFetcher"],
    ),
    // SEO tools.
    crawler("AhrefsBot", "Ahrefs", Purpose::SeoTool, &["AhrefsBot"]),
    crawler("SemrushBot", "Semrush", Purpose::SeoTool, &["SemrushBot"]),
    crawler("MJ12bot", "Majestic", Purpose::SeoTool, &["MJ12bot"]),
    crawler("DotBot", "Moz", Purpose::SeoTool, &["DotBot"]),
    crawler("rogerbot", "Moz", Purpose::SeoTool, &["rogerbot"]),
    crawler("BLEXBot", "WebMeUp", Purpose::SeoTool, &["BLEXBot"]),
    // Social previews.
    crawler(
        "facebookexternalhit",
        "Meta",
        Purpose::SocialPreview,
        &["facebookexternalhit"],
    ),
    crawler("Twitterbot", "X", Purpose::SocialPreview, &["Twitterbot"]),
    crawler(
        "LinkedInBot",
        "LinkedIn",
        Purpose::SocialPreview,
        &["LinkedInBot"],
    ),
    crawler("Slackbot", "Slack", Purpose::SocialPreview, &["Slackbot"]),
    crawler(
        "Discordbot",
        "Discord",
        Purpose::SocialPreview,
        &["Discordbot"],
    ),
    crawler(
        "Pinterestbot",
        "Pinterest",
        Purpose::SocialPreview,
        &["Pinterestbot"],
    ),
];

/// Looks a crawler up by token (case-insensitive).
pub fn find(token: &str) -> Option<&'static Crawler> {
    CRAWLERS
        .iter()
        .find(|crawler| crawler.token.eq_ignore_ascii_case(token))
}

/// What one crawler may fetch under a robots.txt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrawlerAccess {
    /// The crawler's token.
    pub token: String,
    /// Who runs it.
    pub operator: String,
    /// What it is for.
    pub purpose: Purpose,
    /// The group it follows, as the engine names it (`none` when no group applies).
    pub group: GroupSelection,
    /// Whether it may fetch `/`, and why.
    pub root: Explanation,
    /// Whether it may fetch the analysed page, and why (when a page was given).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub page: Option<Explanation>,
    /// Its crawl-delay in seconds, if its group sets one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub crawl_delay: Option<f64>,
}

impl CrawlerAccess {
    /// Whether it may fetch `/`.
    pub fn root_allowed(&self) -> bool {
        self.root.allowed
    }
}

/// The rules `crawler` follows: its chain, then `*` unless it ignores `*`.
pub fn rules_for(robots: &RobotsTxt, crawler: &Crawler) -> robots::AgentRules {
    let rules = rules_for_tokens(robots, crawler.chain);
    if crawler.ignores_global && *rules.group() == GroupSelection::Global {
        // Only a group naming it counts: without one, no group applies.
        return AgentRules::empty();
    }
    rules
}

/// The rules for `tokens` in order of preference, each read as the engine reads a caller's
/// agent (`MJ12bot` names the groups whose user-agent value is `MJ12bot`, not every `MJ…`
/// group); with none left, the `*` groups.
pub(crate) fn rules_for_tokens(robots: &RobotsTxt, tokens: &[&str]) -> AgentRules {
    let preferred = tokens.iter().take(robots::MAX_PREFERRED_TOKENS);
    match ProductTokens::read(preferred) {
        // The notes say how each name was read; the directory's names are known, so they
        // carry nothing for the report.
        Ok((tokens, _notes)) => robots.rules_for(&tokens),
        Err(_) => robots.global_rules(),
    }
}

/// The groups naming each token of the file (lowercase token: group indices, ascending).
fn token_groups(robots: &RobotsTxt) -> HashMap<String, Vec<usize>> {
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for (index, group) in robots.groups().iter().enumerate() {
        for agent in &group.user_agents {
            if let robots::UserAgentProduct::Token(token) = &agent.product {
                let named = groups.entry(token.to_ascii_lowercase()).or_default();
                if named.last() != Some(&index) {
                    named.push(index);
                }
            }
        }
    }
    groups
}

/// The groups one crawler of the directory follows, as [`table`] found them.
enum Chosen<'a> {
    /// Named by an RFC 9309 token: the groups that name it (cached per set of groups).
    Groups(&'a str, &'a [usize]),
    /// Named by a name beyond the RFC's tokens: its rules, chosen by the engine.
    Rules(Box<AgentRules>),
}

/// What every crawler of the directory may fetch; `page` is a URL or path to check too.
///
/// Crawlers that end up with the same groups share one set of merged rules, checked once
/// (a file can name every crawler of the directory in one group of thousands of rules).
pub fn table(robots: &RobotsTxt, page: Option<&str>) -> Vec<CrawlerAccess> {
    let named = token_groups(robots);
    // Per set of groups: root and page decisions and crawl-delay.
    type Checked = (Explanation, Option<Explanation>, Option<f64>);
    let mut checked: HashMap<Option<&[usize]>, Checked> = HashMap::new();
    let check = |rules: AgentRules| -> Checked {
        (
            rules.check("/").explain(),
            page.map(|page| rules.check(page).explain()),
            rules.crawl_delay().map(|delay| delay.seconds),
        )
    };
    CRAWLERS
        .iter()
        .map(|crawler| {
            let chosen = crawler.chain.iter().copied().find_map(|token| {
                if robots::product_token(token) == Some(token) {
                    let groups = named.get(&token.to_ascii_lowercase())?;
                    return Some(Chosen::Groups(token, groups.as_slice()));
                }
                // A name beyond RFC 9309's tokens (`MJ12bot`) names the groups whose value
                // starts with the whole name, which the token map cannot tell: the engine
                // chooses (a handful of crawlers, one pass over the groups each).
                let (tokens, _notes) = ProductTokens::read([token]).ok()?;
                let rules = robots.rules_for(&tokens);
                matches!(rules.group(), GroupSelection::Named(_))
                    .then(|| Chosen::Rules(Box::new(rules)))
            });
            let (selection, (root, page, crawl_delay)) = match chosen {
                Some(Chosen::Groups(token, groups)) => {
                    let selection = GroupSelection::Named(token.to_owned());
                    let checked = checked.entry(Some(groups)).or_insert_with(|| {
                        check(robots.rules_of_groups(selection.clone(), groups))
                    });
                    (selection, checked.clone())
                }
                Some(Chosen::Rules(rules)) => (rules.group().clone(), check(*rules)),
                None if crawler.ignores_global => {
                    (GroupSelection::None, check(AgentRules::empty()))
                }
                None => {
                    let global = checked
                        .entry(None)
                        .or_insert_with(|| check(robots.global_rules()));
                    (global.0.group.clone(), global.clone())
                }
            };
            let in_group = |mut explanation: Explanation| {
                explanation.group = selection.clone();
                explanation
            };
            CrawlerAccess {
                token: crawler.token.to_owned(),
                operator: crawler.operator.to_owned(),
                purpose: crawler.purpose,
                group: selection.clone(),
                root: in_group(root),
                page: page.map(in_group),
                crawl_delay,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unique_product_tokens() {
        let mut seen = std::collections::HashSet::new();
        for crawler in CRAWLERS {
            assert!(
                seen.insert(crawler.token.to_ascii_lowercase()),
                "{}",
                crawler.token
            );
            assert!(crawler
                .token
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_' || b.is_ascii_digit()));
            assert_eq!(crawler.chain.first(), Some(&crawler.token));
        }
    }

    #[test]
    fn image_falls_back_to_googlebot_then_star() {
        let robots = RobotsTxt::parse(
            b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /\n",
        );
        let image = find("googlebot-image").unwrap();
        let rules = rules_for(&robots, image);
        assert_eq!(rules.group(), &GroupSelection::Named("Googlebot".into()));
        let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /\n");
        assert_eq!(rules_for(&robots, image).group(), &GroupSelection::Global);
    }

    #[test]
    fn a_name_with_digits_picks_its_own_group_only() {
        let robots = RobotsTxt::parse(
            b"User-agent: MJ\nDisallow: /\n\nUser-agent: MJ12bot\nDisallow: /private\n\nUser-agent: *\nDisallow: /all\n",
        );
        let majestic = find("MJ12bot").unwrap();
        let rules = rules_for(&robots, majestic);
        assert!(rules.check("/").allowed);
        assert!(!rules.check("/private").allowed);
        let row = table(&robots, Some("/private"))
            .into_iter()
            .find(|row| row.token == "MJ12bot")
            .unwrap();
        assert!(row.root_allowed(), "{row:?}");
        assert!(!row.page.unwrap().allowed, "the MJ12bot group decides");
    }

    #[test]
    fn adsbot_ignores_star() {
        let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /\n");
        let ads = find("AdsBot-Google").unwrap();
        let rules = rules_for(&robots, ads);
        assert_eq!(rules.group(), &GroupSelection::None);
        assert!(rules.is_allowed("/"));
        let robots = RobotsTxt::parse(b"User-agent: AdsBot-Google\nDisallow: /\n");
        assert!(!rules_for(&robots, ads).is_allowed("/"));
    }

    #[test]
    fn table_agrees_with_rules_for() {
        let robots = RobotsTxt::parse(
            b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: msnbot\nDisallow: /\n\nUser-agent: *\nDisallow: /s\n",
        );
        for (row, crawler) in table(&robots, Some("/g")).iter().zip(CRAWLERS) {
            let rules = rules_for(&robots, crawler);
            assert_eq!(&row.group, rules.group(), "{}", crawler.token);
            assert_eq!(row.root, rules.check("/").explain(), "{}", crawler.token);
            assert_eq!(
                row.page,
                Some(rules.check("/g").explain()),
                "{}",
                crawler.token
            );
        }
    }

    #[test]
    fn table_reports_deciding_lines() {
        let robots = RobotsTxt::parse(
            b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n",
        );
        let table = table(&robots, Some("/private/x"));
        let gpt = table.iter().find(|row| row.token == "GPTBot").unwrap();
        assert!(!gpt.root.allowed);
        assert_eq!(gpt.root.rule.as_ref().unwrap().line, 2);
        let google = table.iter().find(|row| row.token == "Googlebot").unwrap();
        assert!(google.root.allowed);
        assert_eq!(google.page.as_ref().unwrap().rule.as_ref().unwrap().line, 5);
    }
}
