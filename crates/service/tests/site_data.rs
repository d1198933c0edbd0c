//! The pages' data (`site::SiteData` on the service) on both backends: reports found by
//! domain, folded reports, pastes only by id, the previous report, domains, current reports,
//! statistics, icons.

mod common;

use std::net::IpAddr;
use std::sync::Arc;

use common::{day, done_report};
use db::testing::on_both_backends;
use service::{ServiceConfig, ServiceData, Store, SystemClock};
use site::{ReportLookup, SiteData};
use url::Url;

fn data(store: Store) -> ServiceData {
    let fetcher = fetch::Fetcher::new(fetch::FetchConfig::new(
        "RobotsTxtParser",
        "http://s.test/bot",
    ))
    .unwrap();
    let config = ServiceConfig {
        public_url: "http://service.test/".parse().unwrap(),
        limits: audit::Limits::default(),
    };
    ServiceData::new(service::Service::new(
        store,
        fetcher,
        config,
        Arc::new(SystemClock),
    ))
}

fn id(id: &service::ReportId) -> site::ReportId {
    site::ReportId::parse(id.as_str()).unwrap()
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
        let data = data(store.clone());

        let ReportLookup::Found(found) = data.report("d.test", &id(&current)).await.unwrap() else {
            panic!("found")
        };
        assert!(matches!(found.state, site::ReportState::Done(_)));
        assert_eq!(found.url.as_str(), "https://www.d.test/");
        assert_eq!(
            data.report("other.test", &id(&current)).await.unwrap(),
            ReportLookup::Missing
        );
        assert_eq!(
            data.report("d.test", &id(&old)).await.unwrap(),
            ReportLookup::Folded
        );
        let before = data
            .previous_report(&found.url, found.created_at)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(before.score, 60, "the previous report");
        assert_eq!(data.url_indexable(&found.url).await.unwrap(), Some(true));

        let history = data.domain("D.test").await.unwrap().unwrap();
        assert_eq!(history.reports.len(), 2);
        assert_eq!(history.reports[0].score, 80, "newest first");
        assert_eq!(
            (
                history.months[0].year,
                history.months[0].month,
                history.months[0].reports
            ),
            (2026, 1, 2)
        );
        assert!(history.has_icon);
        assert_eq!(
            data.icon("d.test").await.unwrap().as_deref(),
            Some(&b"\x89PNG"[..])
        );

        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let paste = data
            .submit_paste(b"User-agent: *\nDisallow: /x\n".to_vec(), client)
            .await
            .unwrap();
        assert!(data.paste(&paste).await.unwrap().is_some());
        assert_eq!(
            data.report("", &paste).await.unwrap(),
            ReportLookup::Missing,
            "never by domain"
        );
        assert!(
            data.paste(&id(&current)).await.unwrap().is_none(),
            "a report is not a paste"
        );

        let currents = data.current_reports().await.unwrap();
        assert_eq!(currents.len(), 1);
        assert_eq!((currents[0].score, currents[0].has_icon), (80, true));
        let stats = data.stats().await.unwrap();
        assert_eq!(stats.sites, 1);
        let invalid = data.submit_url("ftp://x.test/", client).await;
        assert!(
            matches!(invalid, Err(site::SubmitError::Invalid(_))),
            "{invalid:?}"
        );
        let url = Url::parse("https://www.d.test/").unwrap();
        assert_eq!(store.url_indexable(&url).await.unwrap(), Some(true));
    })
    .await;
}
