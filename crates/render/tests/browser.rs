//! Pages rendered in a real headless Chromium against the loopback test web, every request
//! decided by the polite gate; what reached the server is read from its request log.
//!
//! One browser for the whole file (one test function, scenarios in turn), short budgets.
//! Skipped, with a message, only when no Chromium is installed.

use std::sync::Arc;
use std::time::Duration;

use common::gate;
use fetch::Polite;
use render::{
    GateResponse, PageToRender, PoliteGate, RenderLimits, Rendered, Renderer, SubOutcome,
};
use testweb::{RecordedRequest, Reply, TestWeb};
use tokio::time::Instant;
use url::Url;

mod common;

const PACE: Duration = Duration::from_millis(250);

fn polite(hosts: &[&str]) -> Arc<Polite> {
    common::polite(hosts, PACE)
}

fn document(html: &str) -> GateResponse {
    let mut headers = http::HeaderMap::new();
    headers.insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    GateResponse {
        status: http::StatusCode::OK,
        headers,
        body: html.as_bytes().to_vec(),
    }
}

fn text(body: &str, content_type: &str) -> Reply {
    Reply::ok().header("Content-Type", content_type).body(body)
}

fn png() -> Reply {
    Reply::ok()
        .header("Content-Type", "image/png")
        .body(b"\x89PNG\r\n\x1a\nnot really")
}

async fn render(
    renderer: &Renderer,
    url: &str,
    html: &str,
    gate: &Arc<PoliteGate>,
    limits: &RenderLimits,
) -> Rendered {
    let page = PageToRender {
        url: Url::parse(url).unwrap(),
        document: document(html),
    };
    renderer
        .render(page, Arc::clone(gate), limits)
        .await
        .expect("the page renders")
}

fn paths(log: &[RecordedRequest], host: &str) -> Vec<String> {
    log.iter()
        .filter(|r| r.host == host)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn quick() -> RenderLimits {
    RenderLimits {
        time_budget: Duration::from_secs(15),
        settle: Duration::from_millis(300),
        ..RenderLimits::default()
    }
}

/// A page whose script makes links and a robots meta tag, fetches a disallowed path and
/// POSTs, with images in allowed and JittyBot-Image-disallowed folders and scripts from a
/// third-party host with its own robots.txt.
async fn rules_hold(renderer: &Renderer, web: &TestWeb) {
    let port = web.http_port();
    web.site("site.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: JittyBot\nDisallow: /secret/\n\n\
         User-agent: JittyBot-Image\nDisallow: /private-img/\n",
        ));
    let app = format!(
        "document.addEventListener('DOMContentLoaded', function () {{
           var a = document.createElement('a'); a.href = '/made-by-script';
           document.body.appendChild(a);
           var m = document.createElement('meta'); m.name = 'robots'; m.content = 'noarchive';
           document.head.appendChild(m);
           fetch('/secret/data.json').catch(function () {{}});
           fetch('/api/submit', {{method: 'POST', body: 'x'}}).catch(function () {{}});
           fetch('/api/ok.json').then(function (r) {{ return r.json(); }}).then(function (j) {{
             var b = document.createElement('a'); b.href = j.next; document.body.appendChild(b);
           }}).catch(function () {{}});
           var s = document.createElement('script'); s.src = 'http://third.test:{port}/lib.js';
           document.head.appendChild(s);
           var t = document.createElement('script'); t.src = 'http://third.test:{port}/blocked.js';
           document.head.appendChild(t);
         }});"
    );
    web.site("site.test")
        .path("/app.js")
        .respond(text(&app, "text/javascript"));
    web.site("site.test")
        .path("/api/ok.json")
        .respond(text("{\"next\": \"/from-data\"}", "application/json"));
    web.site("site.test").path("/img/ok.png").respond(png());
    web.site("site.test")
        .path("/private-img/no.png")
        .respond(png());
    web.site("third.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /blocked.js\n"));
    web.site("third.test").path("/lib.js").respond(text(
        "var c = document.createElement('a'); c.href = '/from-third'; \
         document.body.appendChild(c);",
        "text/javascript",
    ));
    web.site("third.test")
        .path("/blocked.js")
        .respond(text("document.title = 'leaked';", "text/javascript"));
    let html = "<!doctype html><html><head><script src=\"/app.js\"></script></head><body>\
                <a href=\"/served\">served</a><img src=\"/img/ok.png\">\
                <img src=\"/private-img/no.png\"></body></html>";
    let html = format!(
        "{html}<iframe src=\"http://frame.test:{port}/frame.html\"></iframe>\
         <iframe src=\"http://127.0.0.1:{port}/direct.html\"></iframe>"
    );
    web.site("frame.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site("frame.test")
        .path("/frame.html")
        .respond(text("<p>framed</p>", "text/html"));
    let polite = polite(&["site.test", "third.test"]);
    let gate = gate(&polite);
    let url = web.http_url("site.test", "/");
    let rendered = render(renderer, &url, &html, &gate, &quick()).await;
    let log = web.requests();
    // Nothing reached the server but through the gate: a cross-site frame (another
    // renderer process) and a frame on a loopback address included.
    assert!(
        log.iter().all(|r| r
            .header("user-agent")
            .is_some_and(|ua| ua.contains("JittyBot"))),
        "{:?}",
        log.iter().map(|r| (&r.host, &r.path)).collect::<Vec<_>>()
    );
    let framed = paths(&log, "frame.test");
    assert!(
        framed.is_empty() || framed[0] == "GET /robots.txt",
        "a frame's host: robots.txt first: {framed:?}"
    );

    let mut site = paths(&log, "site.test");
    site.sort();
    assert_eq!(
        site,
        vec![
            "GET /api/ok.json",
            "GET /app.js",
            "GET /img/ok.png",
            "GET /robots.txt"
        ],
        "site.test saw exactly what its rules allow (not the page itself: the caller gave it)"
    );
    let third = paths(&log, "third.test");
    assert_eq!(
        third,
        vec!["GET /robots.txt", "GET /lib.js"],
        "robots.txt first"
    );
    assert!(log.iter().all(|r| r.method == "GET"), "nothing but GET");
    let ua = |path: &str| {
        log.iter()
            .find(|r| r.path == path)
            .and_then(|r| r.header("user-agent"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        ua("/img/ok.png").contains("JittyBot-Image/"),
        "{}",
        ua("/img/ok.png")
    );
    assert!(ua("/app.js").contains("JittyBot/"), "{}", ua("/app.js"));

    let links: Vec<String> = rendered
        .facts
        .links
        .iter()
        .map(|l| l.url.path().to_string())
        .collect();
    for made in ["/served", "/made-by-script", "/from-data", "/from-third"] {
        assert!(links.contains(&made.to_string()), "{made} in {links:?}");
    }
    assert!(
        rendered
            .facts
            .robots_meta
            .iter()
            .any(|m| m.name == "robots" && m.content == "noarchive"),
        "{:?}",
        rendered.facts.robots_meta
    );
    assert!(!rendered.dom.contains("leaked"));
    let outcome = |path: &str| {
        rendered
            .exchanges
            .iter()
            .find(|e| e.url.ends_with(path))
            .map(|e| e.outcome.clone())
    };
    assert_eq!(outcome("/api/submit"), Some(SubOutcome::MethodRefused));
    assert!(matches!(
        outcome("/secret/data.json"),
        Some(SubOutcome::Denied(_))
    ));
    assert!(matches!(
        outcome("/private-img/no.png"),
        Some(SubOutcome::Denied(_))
    ));
    assert!(matches!(
        outcome("/img/ok.png"),
        Some(SubOutcome::Answered { .. })
    ));
    let records = gate.take_records();
    let third_robots: usize = records
        .iter()
        .filter(|r| r.request.url.host_str() == Some("third.test"))
        .map(|r| r.trail.robots_fetches.len())
        .sum();
    assert_eq!(
        third_robots, 1,
        "third.test's robots.txt fetch is recorded once, with the request that made it"
    );
    assert!(rendered.loaded && !rendered.out_of_time);
}

/// Many images of one origin: the server's clock shows the pace held; over the request
/// budget the rest are never requested.
async fn pace_and_request_budget(renderer: &Renderer, web: &TestWeb) {
    web.site("paced.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    let mut html = String::from("<html><body>");
    for i in 0..8 {
        web.site("paced.test")
            .path(&format!("/i{i}.png"))
            .respond(png());
        html.push_str(&format!("<img src=\"/i{i}.png\">"));
    }
    html.push_str("</body></html>");
    let polite = polite(&["paced.test"]);
    let limits = RenderLimits {
        max_requests: 5,
        ..quick()
    };
    let url = web.http_url("paced.test", "/");
    let rendered = render(renderer, &url, &html, &gate(&polite), &limits).await;
    let log: Vec<RecordedRequest> = web
        .requests()
        .into_iter()
        .filter(|r| r.host == "paced.test")
        .collect();
    let images = log.iter().filter(|r| r.path.ends_with(".png")).count();
    assert_eq!(
        images,
        5,
        "the request budget: {:?}",
        paths(&log, "paced.test")
    );
    let mut times: Vec<Instant> = log.iter().map(|r| r.at).collect();
    times.sort();
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    // Arrival times jitter by a connection set-up; the pacer spaces the starts.
    let tolerance = Duration::from_millis(30);
    assert!(
        gaps.iter().all(|g| *g + tolerance >= PACE),
        "the pace held between every two requests: {gaps:?}"
    );
    let over = rendered
        .exchanges
        .iter()
        .filter(|e| e.outcome == SubOutcome::OverRequestBudget)
        .count();
    assert_eq!(over, 3);
}

/// A sub-request that never answers in time: the render ends within its time budget.
async fn time_budget(renderer: &Renderer, web: &TestWeb) {
    web.site("slow.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site("slow.test")
        .path("/slow.js")
        .respond(text("1", "text/javascript").delay(Duration::from_secs(30)));
    let polite = polite(&["slow.test"]);
    let limits = RenderLimits {
        time_budget: Duration::from_secs(4),
        ..quick()
    };
    let url = web.http_url("slow.test", "/");
    let html = "<html><body><p>kept</p><script src=\"/slow.js\"></script></body></html>";
    let started = Instant::now();
    let rendered = render(renderer, &url, html, &gate(&polite), &limits).await;
    assert!(
        started.elapsed() < limits.time_budget + Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(rendered.out_of_time);
    assert!(rendered.dom.contains("kept"));
}

/// The renderer processes under the browser's main process `root`: (page renderers, renderers
/// of the browser's own WebUI).
fn renderers(root: u32) -> (usize, usize) {
    let mut parent = std::collections::HashMap::new();
    let mut cmdline = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1));
        if let Some(ppid) = ppid.and_then(|p| p.parse::<u32>().ok()) {
            parent.insert(pid, ppid);
        }
        let line = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        cmdline.insert(pid, String::from_utf8_lossy(&line).into_owned());
    }
    let under = |mut pid: u32| {
        while let Some(&p) = parent.get(&pid) {
            if p == root {
                return true;
            }
            pid = p;
        }
        false
    };
    let of_tree: Vec<&String> = cmdline
        .iter()
        .filter(|(pid, line)| line.contains("--type=renderer") && under(**pid))
        .map(|(_, line)| line)
        .collect();
    let ui = of_tree
        .iter()
        .filter(|l| l.contains("--top-chrome-webui"))
        .count();
    (of_tree.len() - ui, ui)
}

/// While a page is open (waiting for a script that never comes), its window started no
/// renderer for the browser's own UI (the address bar's suggestion popup is a WebUI page,
/// preloaded per window unless turned off): the page's renderer is the only one.
async fn no_browser_ui_renderer(renderer: &Renderer, web: &TestWeb) {
    let polite = polite(&["slow.test"]);
    let limits = RenderLimits {
        time_budget: Duration::from_secs(4),
        ..quick()
    };
    let url = web.http_url("slow.test", "/");
    let html = "<html><body><script src=\"/slow.js\"></script></body></html>";
    let root = renderer.pid().expect("the browser's process id");
    let watch = async {
        let mut seen = (0, 0);
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let (pages, ui) = renderers(root);
            seen = (seen.0.max(pages), seen.1.max(ui));
        }
        seen
    };
    let gate = gate(&polite);
    let (_, (pages, ui)) = tokio::join!(render(renderer, &url, html, &gate, &limits), watch);
    assert!(pages >= 1, "the page's renderer is seen");
    assert_eq!(ui, 0, "no renderer for the browser's own UI");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rendered_pages_obey_jittybots_rules() {
    let Some(chromium) = render::find_chromium() else {
        eprintln!("SKIPPED: no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        return;
    };
    let web = TestWeb::start().await;
    let renderer = Renderer::launch(&chromium).await.expect("chromium starts");
    rules_hold(&renderer, &web).await;
    web.clear_requests();
    pace_and_request_budget(&renderer, &web).await;
    web.clear_requests();
    time_budget(&renderer, &web).await;
    no_browser_ui_renderer(&renderer, &web).await;
    renderer.close().await;
}
