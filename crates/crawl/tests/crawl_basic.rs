//! End to end on the test web: a crawl fetches every page of its sites once, within scope,
//! obeying robots.txt, archives everything, and resumes without fetching anything again.

mod common;

use common::*;
use crawl::store::Store;
use db::testing::on_both_backends;
use testweb::MultiWeb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_crawl_fetches_each_page_once_and_archives_it() {
    on_both_backends(|target| async move {
        let web = MultiWeb::start(2).await;
        small_site(&web, "www.a.test", 5);
        small_site(&web, "b.test", 3);
        let warc = tempfile::tempdir().unwrap();
        let f = fetcher(&web, &[("www.a.test", 0), ("b.test", 1)]);
        let seeds = [web.http_url("www.a.test", "/"), web.http_url("b.test", "/")];
        let (summary, _events) = crawl(&target, f.clone(), config(warc.path()), &seeds).await;
        let log = web.requests();
        let pages: Vec<String> = log
            .iter()
            .filter(|r| r.path.starts_with("/p") || r.path == "/")
            .map(|r| format!("{}{}", r.host, r.path))
            .collect();
        let mut unique = pages.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(pages.len(), unique.len(), "a page fetched twice: {pages:?}");
        assert_eq!(unique.len(), 5 + 1 + 3 + 1, "{unique:?}");
        assert!(
            log.iter().all(|r| !r.path.starts_with("/private")),
            "robots.txt obeyed"
        );
        assert!(log.iter().all(|r| r.host != "elsewhere.test"), "scope kept");
        assert!(log.iter().all(|r| r.method == "GET" || r.method == "HEAD"));
        assert!(log.iter().all(|r| r
            .header("user-agent")
            .is_some_and(|u| u.contains("JittyBot/"))));
        assert_eq!(summary.reason, crawl::crawler::EndReason::Finished);
        let records = warc_records(warc.path());
        let responses = records.iter().filter(|(t, _)| t == "response").count();
        let requests = records.iter().filter(|(t, _)| t == "request").count();
        assert_eq!(responses, requests);
        assert!(
            responses >= log.len(),
            "every request archived: {responses} < {}",
            log.len()
        );
        let store = Store::open(&target).await.unwrap();
        let status = store.status(jiff::Timestamp::now()).await.unwrap();
        assert_eq!(status.urls["queued"], 0);
        assert_eq!(status.urls["in_flight"], 0);
        assert_eq!(status.urls["disallowed"], 2, "{status:?}");
        store.close().await;
        // A second run: nothing is due, nothing is fetched but what must be re-read.
        web.clear_requests();
        let (again, _) = crawl(&target, f, config(warc.path()), &seeds).await;
        assert_eq!(
            again.fetched,
            0,
            "{:?}",
            web.requests()
                .iter()
                .map(|r| r.path.clone())
                .collect::<Vec<_>>()
        );
        assert!(web
            .requests()
            .iter()
            .all(|r| r.path == "/sitemap.xml" || r.path == "/robots.txt"));
    })
    .await;
}
