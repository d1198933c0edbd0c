//! What the pages and the API read, on both backends: a report by its domain (found, folded,
//! missing), the previous report of its URL and what search engines are told, pastes only by
//! id, domains, current reports, statistics, icons, a refused submission.

mod common;

use std::net::IpAddr;
use std::sync::Arc;

use common::{analysis, day, done_report};
use db::testing::on_both_backends;
use service::indexing::NoindexReason;
use service::{ReportLookup, ReportState, Service, ServiceConfig, Store, SubmitError, SystemClock};
use url::Url;

fn service(store: Store) -> Service {
    let fetcher = fetch::Fetcher::new(fetch::FetchConfig::new(
        "RobotsTxtParser",
        "http://s.test/bot",
    ))
    .unwrap();
    let mut config = ServiceConfig::new("http://service.test/".parse().unwrap());
    config.data_refresh = std::time::Duration::ZERO;
    config.stats_refresh = std::time::Duration::ZERO;
    Service::new(store, fetcher, config, Arc::new(SystemClock))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pages_read_the_store() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        let old = done_report(&store, "https://www.d.test/", day(1), 40).await;
        done_report(&store, "https://www.d.test/", day(2), 50).await;
        done_report(&store, "https://www.d.test/", day(299), 60).await;
        let current = done_report(&store, "https://www.d.test/", day(300), 80).await;
        store.retention(day(320), false).await.unwrap();
        store
            .set_icon("d.test", Some(b"\x89PNG"), day(300))
            .await
            .unwrap();
        let service = service(store.clone());

        let ReportLookup::Found(found) = service.report_page("d.test", &current).await.unwrap()
        else {
            panic!("found")
        };
        assert_eq!(found.report.row.state, ReportState::Done);
        assert!(found.report.report.is_some());
        assert_eq!(
            found.report.row.url.as_ref().map(Url::as_str),
            Some("https://www.d.test/")
        );
        assert_eq!(
            found.previous.as_ref().map(|a| a.score),
            Some(60),
            "the previous report"
        );
        assert!(found.indexing.indexable());
        assert_eq!(
            service.report_page("other.test", &current).await.unwrap(),
            ReportLookup::Missing
        );
        assert_eq!(
            service.report_page("D.test", &old).await.unwrap(),
            ReportLookup::Folded
        );

        let view = service.domain("D.test").await.unwrap().unwrap();
        assert_eq!(view.reports.len(), 2);
        assert_eq!(view.reports[0].score, Some(80), "newest first");
        assert_eq!(
            (
                view.summaries[0].month.to_string(),
                view.summaries[0].reports
            ),
            ("2026-01".to_owned(), 2)
        );
        assert!(view.has_icon && view.indexable);
        assert_eq!(
            service.icon("d.test").await.unwrap().as_deref(),
            Some(&b"\x89PNG"[..])
        );

        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let paste = service
            .submit_paste(b"User-agent: *\nDisallow: /x\n", client)
            .await
            .unwrap();
        assert!(paste.path.starts_with("/paste/"));
        assert!(service.paste(&paste.id).await.unwrap().is_some());
        assert_eq!(
            service.report_page("", &paste.id).await.unwrap(),
            ReportLookup::Missing,
            "never by domain"
        );
        assert!(
            service.paste(&current).await.unwrap().is_none(),
            "a report is not a paste"
        );

        let currents = service.current().await.unwrap();
        assert_eq!(currents.len(), 1);
        assert_eq!((currents[0].score, currents[0].has_icon), (80, true));
        let stats = service.stats().await.unwrap();
        assert_eq!(stats.sites, 1);
        let invalid = service.submit_analysis("ftp://x.test/", client).await;
        assert!(
            matches!(invalid, Err(SubmitError::BadUrl(_))),
            "{invalid:?}"
        );
    })
    .await;
}

/// The newest report of a URL decides for its older ones, on the report pages and the domain
/// page: an old indexable report of a URL whose newest asks not to be indexed is `noindex`,
/// and a domain whose every URL's newest report is noindex has a `noindex` page.
#[tokio::test(flavor = "multi_thread")]
async fn the_newest_report_of_a_url_decides_for_its_pages() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        let old = done_report(&store, "https://n.test/", day(1), 80).await;
        let id = store
            .queue_analysis(&Url::parse("https://n.test/").unwrap(), day(2), false)
            .await
            .unwrap();
        let mut newest = analysis("https://n.test/", "User-agent: *\nAllow: /\n", day(2));
        newest.page.directives.add_header("noindex");
        store.finish_report(&id, &newest).await.unwrap();
        let service = service(store.clone());
        let ReportLookup::Found(page) = service.report_page("n.test", &old).await.unwrap() else {
            panic!("found")
        };
        assert!(
            page.report.row.indexable,
            "the old report alone was indexable"
        );
        assert_eq!(
            page.indexing.noindex,
            Some(NoindexReason::NewerReportForbids)
        );
        let view = service.domain("n.test").await.unwrap().unwrap();
        assert!(!view.indexable, "its only URL may not be indexed");
        assert!(view.reports.iter().any(|r| r.indexable));
        done_report(&store, "https://n.test/other", day(3), 70).await;
        assert!(service.domain("n.test").await.unwrap().unwrap().indexable);
    })
    .await;
}
