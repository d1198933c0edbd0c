//! The JSON API on both backends, with analyses run against the test web (loopback servers,
//! their request log asserted): queueing, the job life cycle, input checks and limits, the
//! 10-minute reuse, the per-client limit, pastes never listed.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{Request, StatusCode};
use axum::Router;
use db::testing::on_both_backends;
use db::{DbTarget, Holder};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use service::limits::{CLIENT_ANALYSES_PER_WINDOW, MAX_PASTE_BYTES, MAX_QUEUED_PER_CLIENT};
use service::{Service, ServiceConfig, Store, SystemClock};
use testweb::{Reply, TestWeb};
use tower::ServiceExt;

async fn service(target: &DbTarget, web: &TestWeb, allow_private: bool, hosts: &[&str]) -> Service {
    let store = Store::open(target).await.unwrap();
    let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
    config.allow_private_addresses = allow_private;
    for host in hosts {
        for pin in web.pins(host) {
            config.resolve.push(pin.parse().unwrap());
        }
    }
    let fetcher = fetch::Fetcher::new(config).unwrap();
    let config = ServiceConfig::new("http://service.test/".parse().unwrap());
    Service::new(store, fetcher, config, Arc::new(SystemClock))
}

struct Answer {
    status: StatusCode,
    retry_after: Option<String>,
    json: Value,
}

async fn call(
    app: &Router,
    client: [u8; 4],
    method: &str,
    uri: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Answer {
    let app = app
        .clone()
        .layer(MockConnectInfo(SocketAddr::from((client, 4000))));
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap();
    let response = app.oneshot(request).await.unwrap();
    let status = response.status();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("{uri}: not JSON: {}", String::from_utf8_lossy(&bytes)));
    Answer {
        status,
        retry_after,
        json,
    }
}

async fn get(app: &Router, uri: &str) -> Answer {
    call(app, [192, 0, 2, 1], "GET", uri, "text/plain", Vec::new()).await
}

/// `POST /api/paste` of `text` as `text/plain`, from `client`.
async fn paste(app: &Router, client: [u8; 4], text: Vec<u8>) -> Answer {
    call(app, client, "POST", "/api/paste", "text/plain", text).await
}

async fn analyze(app: &Router, client: [u8; 4], url: &str) -> Answer {
    let body = serde_json::to_vec(&json!({ "url": url })).unwrap();
    call(
        app,
        client,
        "POST",
        "/api/analyze",
        "application/json",
        body,
    )
    .await
}

fn site(web: &TestWeb, host: &str) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /private/\n"));
    web.site(host).path("/page").respond(Reply::html(
        "<html><head><title>x</title></head><body></body></html>",
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_analysis_is_queued_run_by_a_worker_stored_and_reused() {
    on_both_backends(move |target| {
        async move {
            let web = TestWeb::start().await;
            site(&web, "site.test");
            let service = service(&target, &web, true, &["site.test"]).await;
            let app = service::router(service.clone());
            let url = web.http_url("site.test", "/page");
            let queued = analyze(&app, [192, 0, 2, 1], &url).await;
            assert_eq!(queued.status, StatusCode::ACCEPTED, "{}", queued.json);
            let id = queued.json["id"].as_str().unwrap().to_owned();
            assert_eq!(queued.json["state"], "queued");
            assert_eq!(
                queued.json["address"],
                format!("http://service.test/score/site.test/{id}")
            );
            let report = get(&app, &format!("/api/report/{id}")).await;
            assert_eq!(report.json["state"], "queued");
            assert!(
                web.requests().is_empty(),
                "nothing fetched before a worker runs it"
            );

            assert!(service.run_one_job(&Holder::new()).await.unwrap());
            let report = get(&app, &format!("/api/report/{id}")).await;
            assert_eq!(report.json["state"], "done", "{}", report.json);
            assert_eq!(report.json["report"]["robots"]["status"], 200);
            assert_eq!(report.json["report"]["page"]["status"], 200);
            assert_eq!(report.json["indexable"], true);
            assert_eq!(web.requests_to("site.test", "/robots.txt").len(), 1);
            assert_eq!(web.requests_to("site.test", "/page").len(), 1);

            // Within 10 minutes the same URL answers with that report, fetching nothing.
            let again = analyze(&app, [192, 0, 2, 9], &url).await;
            assert_eq!(
                (again.status, again.json["reused"].clone()),
                (StatusCode::OK, json!(true))
            );
            assert_eq!(again.json["id"], id.as_str());
            assert!(
                !service.run_one_job(&Holder::new()).await.unwrap(),
                "no job queued"
            );
            assert_eq!(web.requests_to("site.test", "/robots.txt").len(), 1);

            let domain = get(&app, "/api/score/site.test").await;
            assert_eq!(domain.json["reports"][0]["id"], id.as_str());
            let ranking = get(&app, "/api/ranking").await;
            assert_eq!(
                ranking.json["totals"]["A"].as_u64().unwrap()
                    + ranking.json["totals"]["B"].as_u64().unwrap()
                    + ranking.json["totals"]["C"].as_u64().unwrap()
                    + ranking.json["totals"]["D"].as_u64().unwrap()
                    + ranking.json["totals"]["F"].as_u64().unwrap(),
                1,
                "{}",
                ranking.json
            );
            let health = get(&app, "/api/health").await;
            assert_eq!(
                (health.status, health.json["jobs"].clone()),
                (StatusCode::OK, json!(0))
            );
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_with_a_json_400_before_anything_is_queued() {
    on_both_backends(move |target| {
        async move {
            let web = TestWeb::start().await;
            site(&web, "site.test");
            // Public addresses only: the test web is on loopback.
            let service = service(&target, &web, false, &["site.test"]).await;
            let app = service::router(service.clone());
            let long = format!("https://a.test/{}", "x".repeat(2048));
            let cases = [
                ("site.test/page", "absolute"),
                ("ftp://a.test/", "http and https"),
                ("https://user:pw@a.test/", "credentials"),
                (long.as_str(), "at most 2048"),
                ("", "no URL"),
            ];
            for (input, words) in cases {
                let answer = analyze(&app, [192, 0, 2, 1], input).await;
                assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{input}");
                let message = answer.json["error"].as_str().unwrap();
                assert!(message.contains(words), "{input}: {message}");
            }
            let private = analyze(&app, [192, 0, 2, 1], &web.http_url("site.test", "/page")).await;
            assert_eq!(private.status, StatusCode::BAD_REQUEST);
            assert!(
                private.json["error"]
                    .as_str()
                    .unwrap()
                    .contains("not a public address"),
                "{}",
                private.json
            );
            let not_json = call(
                &app,
                [192, 0, 2, 1],
                "POST",
                "/api/analyze",
                "application/json",
                b"{url".to_vec(),
            )
            .await;
            assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
            let huge = serde_json::to_vec(&json!({ "url": "x".repeat(10_000) })).unwrap();
            let huge = call(
                &app,
                [192, 0, 2, 1],
                "POST",
                "/api/analyze",
                "application/json",
                huge,
            )
            .await;
            assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", huge.json);
            assert_eq!(
                get(&app, "/api/nothing").await.status,
                StatusCode::NOT_FOUND
            );
            assert_eq!(
                get(&app, "/api/report/../../etc").await.status,
                StatusCode::NOT_FOUND
            );
            assert_eq!(
                get(&app, "/api/report/aaaaaaaaaaaaaaaaaaaaaaaaaa")
                    .await
                    .status,
                StatusCode::NOT_FOUND
            );
            assert_eq!(service.store().job_count().await.unwrap(), 0);
            assert!(web.requests().is_empty());
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn each_client_may_queue_its_share_and_ten_submissions_a_minute() {
    on_both_backends(move |target| async move {
        let web = TestWeb::start().await;
        site(&web, "site.test");
        let service = service(&target, &web, true, &["site.test"]).await;
        let app = service::router(service.clone());
        for n in 0..MAX_QUEUED_PER_CLIENT {
            let url = web.http_url("site.test", &format!("/p{n}"));
            assert_eq!(
                analyze(&app, [192, 0, 2, 1], &url).await.status,
                StatusCode::ACCEPTED
            );
        }
        let over = analyze(&app, [192, 0, 2, 1], &web.http_url("site.test", "/share")).await;
        assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS, "{}", over.json);
        assert!(over.json["error"].as_str().unwrap().contains("waiting"));
        assert!(over.retry_after.is_some());
        // The rest of the minute's ten submissions, as pastes; then the rate limit.
        let used = u32::try_from(MAX_QUEUED_PER_CLIENT).unwrap() + 1;
        for _ in used..CLIENT_ANALYSES_PER_WINDOW {
            let text = b"User-agent: *\nDisallow: /x\n".to_vec();
            let pasted = paste(&app, [192, 0, 2, 1], text).await;
            assert_eq!(pasted.status, StatusCode::CREATED);
        }
        let over = paste(&app, [192, 0, 2, 1], b"User-agent: *\n".to_vec()).await;
        assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = over.retry_after.expect("Retry-After").parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
        let other = analyze(&app, [192, 0, 2, 2], &web.http_url("site.test", "/over")).await;
        assert_eq!(other.status, StatusCode::ACCEPTED, "another client");
        let jobs = i64::try_from(MAX_QUEUED_PER_CLIENT).unwrap() + 1;
        assert_eq!(service.store().job_count().await.unwrap(), jobs);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pastes_raw_or_uploaded_are_private_and_capped() {
    on_both_backends(move |target| {
        async move {
            let web = TestWeb::start().await;
            let service = service(&target, &web, true, &[]).await;
            let app = service::router(service.clone());
            let raw = b"User-agent: *\nDissallow: /x\n".to_vec();
            let pasted = paste(&app, [192, 0, 2, 1], raw).await;
            assert_eq!(pasted.status, StatusCode::CREATED, "{}", pasted.json);
            let id = pasted.json["id"].as_str().unwrap().to_owned();
            assert_eq!(pasted.json["address"], format!("http://service.test/paste/{id}"));
            let report = get(&app, &format!("/api/report/{id}")).await;
            assert_eq!((report.json["is_paste"].clone(), report.json["state"].clone()), (json!(true), json!("done")));
            assert!(report.json["report"]["findings"].to_string().contains("syntax"), "{}", report.json);

            let boundary = "XyZ";
            let form = format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"robots.txt\"\r\n\
                 Content-Type: text/plain\r\n\r\nUser-agent: *\nDisallow: /up\n\r\n--{boundary}--\r\n"
            );
            let uploaded = call(&app, [192, 0, 2, 1], "POST", "/api/paste",
                &format!("multipart/form-data; boundary={boundary}"), form.into_bytes()).await;
            assert_eq!(uploaded.status, StatusCode::CREATED, "{}", uploaded.json);
            let up_id = uploaded.json["id"].as_str().unwrap();
            let up = get(&app, &format!("/api/report/{up_id}")).await;
            assert_eq!(up.json["report"]["robots"]["body"], "User-agent: *\nDisallow: /up\n");

            let big = vec![b'#'; MAX_PASTE_BYTES + 1];
            let refused = paste(&app, [192, 0, 2, 1], big).await;
            assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", refused.json);
            let huge = vec![b'#'; MAX_PASTE_BYTES * 2];
            let refused = paste(&app, [192, 0, 2, 1], huge).await;
            assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", refused.json);

            let ranking = get(&app, "/api/ranking").await;
            assert!(ranking.json["picks"].to_string().contains("[]"));
            assert!(!ranking.json.to_string().contains(&id));
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ranking_data_is_read_again_after_a_minute() {
    on_both_backends(move |target| async move {
        let clock = service::ManualClock::new("2026-03-01T10:00:00Z".parse().unwrap());
        let store = Store::open(&target).await.unwrap();
        let fetcher = fetch::Fetcher::new(fetch::FetchConfig::new(
            "RobotsTxtParser",
            "http://s.test/bot",
        ))
        .unwrap();
        let config = ServiceConfig::new("http://service.test/".parse().unwrap());
        let service = Service::new(store.clone(), fetcher, config, clock.clone());
        let total = |r: &service::ranking::Ranking| r.totals.values().sum::<u64>();
        assert_eq!(total(&service.ranking().await.unwrap()), 0);
        let url = url::Url::parse("https://r.test/").unwrap();
        let id = store
            .queue_analysis(&url, service::Clock::now(&*clock), false)
            .await
            .unwrap();
        let mut a = audit::analyze_file(
            audit::ProvidedFile::whole(b"User-agent: *\nAllow: /\n"),
            Some("https://r.test/"),
        );
        a.robots.outcome = audit::report::RobotsStatus::NoFile;
        store.finish_report(&id, &a).await.unwrap();
        clock.advance(service::limits::DATA_REFRESH - std::time::Duration::from_secs(1));
        assert_eq!(total(&service.ranking().await.unwrap()), 0, "cached");
        clock.advance(std::time::Duration::from_secs(1));
        // Read again now; within the window the ranking of the new list is made on a
        // blocking thread while the previous one is answered: it shows within moments.
        let shown = async {
            while total(&service.ranking().await.unwrap()) != 1 {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), shown)
            .await
            .expect("read again");
    })
    .await;
}
