//! Helpers shared by the site's tests: reports built from real audits, stored in a throwaway
//! store of the service (`service::testing`), and requests sent to the router in memory.

#![allow(dead_code)]

use audit::report::RobotsStatus;
use audit::{Analysis, Grade, ProvidedFile};
use axum::body::Body;
use http::{Request, Response};
use http_body_util::BodyExt;
use page::directives::PageDirectives;
use page::head::MetaTag;
use service::testing::TestService;
use testweb::Reply;
use tower::ServiceExt;
use url::Url;

/// An empty HTML page, as the test web serves a site's home page.
pub fn html_page() -> Reply {
    Reply::html("<html><head></head><body></body></html>")
}

/// A finished analysis of `url` as if fetched: `robots` served with rules, the page's
/// `X-Robots-Tag` headers and robots meta tags as given.
pub fn analysis(
    url: &str,
    robots: &str,
    headers: &[&str],
    metas: &[(&str, &str)],
    at: &str,
) -> Analysis {
    let mut analysis = audit::analyze_file(ProvidedFile::whole(robots.as_bytes()), Some(url));
    analysis.robots.outcome = RobotsStatus::Rules;
    analysis.page.requested = true;
    analysis.page.x_robots_tag = headers.iter().map(|h| (*h).to_owned()).collect();
    analysis.page.meta = metas
        .iter()
        .map(|(name, content)| MetaTag {
            name: (*name).to_owned(),
            content: (*content).to_owned(),
        })
        .collect();
    analysis.page.directives =
        PageDirectives::read(headers.iter().copied(), metas.iter().copied(), |_| false);
    analysis.analysed_at = at.parse().expect("a test time");
    analysis
}

/// A plain analysis with a given score.
pub fn scored(url: &str, score: u8, at: &str) -> Analysis {
    let mut analysis = analysis(url, "User-agent: *\nDisallow: /private\n", &[], &[], at);
    analysis.score = score;
    analysis.grade = Grade::from_score(score);
    analysis
}

pub fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

pub fn at(text: &str) -> jiff::Timestamp {
    text.parse().expect("a test time")
}

/// The public address used by the tests.
pub const PUBLIC: &str = "https://robotstxtparser.test/";

/// A service on an empty throwaway store, reading it on every request (no reuse window).
pub async fn store() -> TestService {
    TestService::offline(PUBLIC).await
}

/// The site's router over `test`'s service.
pub fn app(test: &TestService) -> axum::Router {
    site::router(test.service().clone())
}

/// An answer with its body as text.
pub struct Answer {
    pub response: Response<()>,
    pub body: String,
}

impl Answer {
    pub fn status(&self) -> u16 {
        self.response.status().as_u16()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
    }

    pub fn headers(&self, name: &str) -> Vec<String> {
        self.response
            .headers()
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }
}

pub async fn send(app: &axum::Router, request: Request<Body>) -> Answer {
    let response = app
        .clone()
        .oneshot(request)
        .await
        .expect("infallible router");
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.expect("a body").to_bytes();
    Answer {
        response: Response::from_parts(parts, ()),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

pub async fn get(app: &axum::Router, path: &str) -> Answer {
    send(
        app,
        Request::get(path).body(Body::empty()).expect("request"),
    )
    .await
}
