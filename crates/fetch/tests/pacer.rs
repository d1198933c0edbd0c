//! The per-origin pacer on tokio's paused clock: one request in flight, the pace, crawl-delay
//! per host, exponential back-off, Retry-After, pause and probe, the wait budget, the
//! deadline, and export/import.

use std::sync::Arc;
use std::time::Duration;

use fetch::{
    Deadline, Learned, OriginKey, PaceSkip, Pacer, PacerConfig, StatusCode, WaitBudget, WaitLimit,
    WaitReason,
};
use tokio::time::{advance, Instant};

const SECOND: Duration = Duration::from_secs(1);

fn origin() -> OriginKey {
    OriginKey::new("origin-1")
}

fn failure() -> Learned {
    Learned::Failure { retry_after: None }
}

async fn turn(pacer: &Pacer, host: &str, delay: Option<Duration>) -> fetch::Permit {
    pacer
        .acquire(&origin(), host, delay, false, WaitLimit::default())
        .await
        .unwrap()
}

/// Makes one request that teaches `learned`, returning when it started.
async fn request(pacer: &Pacer, learned: Learned) -> Instant {
    let mut permit = turn(pacer, "a.test", None).await;
    let at = Instant::now();
    permit.learn(learned);
    at
}

#[tokio::test(start_paused = true)]
async fn one_request_in_flight_and_the_pace_between_starts() {
    let pacer = Arc::new(Pacer::new(PacerConfig::default()));
    let start = Instant::now();
    let first = turn(&pacer, "a.test", None).await;
    let waiting = {
        let pacer = Arc::clone(&pacer);
        tokio::spawn(async move {
            let _permit = turn(&pacer, "b.test", None).await;
            Instant::now()
        })
    };
    // The first request takes 5 s: the second waits for it, far past the 1 s pace.
    advance(5 * SECOND).await;
    drop(first);
    let second_started = waiting.await.unwrap();
    assert_eq!(second_started - start, 5 * SECOND);
    // Quick requests are spaced by the pace.
    let third = request(&pacer, Learned::Success).await;
    assert_eq!(third - second_started, SECOND);
    // Another origin is not held up.
    let other = pacer
        .acquire(
            &OriginKey::new("other"),
            "c.test",
            None,
            false,
            WaitLimit::default(),
        )
        .await
        .unwrap();
    assert_eq!(other.waited(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_hosts_crawl_delay_raises_that_hosts_gap_only() {
    let pacer = Pacer::new(PacerConfig::default());
    let start = Instant::now();
    drop(turn(&pacer, "slow.test", Some(5 * SECOND)).await);
    let other = turn(&pacer, "fast.test", None).await;
    assert_eq!(other.waited(), SECOND, "the origin's pace only");
    drop(other);
    let slow = turn(&pacer, "slow.test", Some(5 * SECOND)).await;
    assert_eq!(Instant::now() - start, 5 * SECOND);
    assert_eq!(slow.waited(), 4 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_exponentially_up_to_the_maximum_and_success_ends_the_run() {
    let config = PacerConfig {
        backoff_base: Duration::from_secs(30),
        backoff_max: Duration::from_secs(100),
        pause_after: 0,
        ..PacerConfig::default()
    };
    let pacer = Pacer::new(config);
    let mut starts = vec![request(&pacer, failure()).await];
    for _ in 0..3 {
        starts.push(request(&pacer, failure()).await);
    }
    starts.push(request(&pacer, Learned::Success).await);
    starts.push(request(&pacer, Learned::Success).await);
    let gaps: Vec<u64> = starts
        .windows(2)
        .map(|pair| (pair[1] - pair[0]).as_secs())
        .collect();
    // 30 × 2^(n−1), capped at 100; then the pace again.
    assert_eq!(gaps, [30, 60, 100, 100, 1]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_replaces_the_back_off_within_its_bound() {
    let config = PacerConfig {
        max_retry_after: Duration::from_secs(600),
        ..PacerConfig::default()
    };
    let pacer = Pacer::new(config);
    let retry = |seconds| Learned::Failure {
        retry_after: Some(Duration::from_secs(seconds)),
    };
    let first = request(&pacer, retry(120)).await;
    let second = request(&pacer, retry(86_400)).await;
    let third = request(&pacer, Learned::Success).await;
    assert_eq!((second - first).as_secs(), 120);
    assert_eq!((third - second).as_secs(), 600);
}

#[tokio::test(start_paused = true)]
async fn responses_teach_what_the_bot_page_says() {
    for (status, fails) in [
        (429, true),
        (500, true),
        (502, true),
        (503, true),
        (504, true),
        (501, false),
        (404, false),
        (200, false),
        (301, false),
    ] {
        let learned = Learned::from_status(StatusCode::from_u16(status).unwrap(), None);
        assert_eq!(
            matches!(learned, Learned::Failure { .. }),
            fails,
            "{status}"
        );
    }
    let reset = fetch::FetchError::ConnectionReset {
        host: "a.test".into(),
        source: fetch::Cause::message("reset"),
    };
    assert_eq!(Learned::from_error(&reset), failure());
    let refused = fetch::FetchError::AddressRefused {
        host: "a.test".into(),
        address: "10.0.0.1".parse().unwrap(),
        range: fetch::RefusedRange::Private,
    };
    assert_eq!(Learned::from_error(&refused), Learned::Nothing);
}

#[tokio::test(start_paused = true)]
async fn after_failures_in_a_row_the_origin_pauses_until_a_probe_succeeds() {
    let config = PacerConfig {
        backoff_base: Duration::from_secs(10),
        backoff_max: Duration::from_secs(20),
        pause_after: 3,
        ..PacerConfig::default()
    };
    let pacer = Pacer::new(config);
    for _ in 0..3 {
        request(&pacer, failure()).await;
    }
    let paused = pacer
        .acquire(&origin(), "a.test", None, false, WaitLimit::default())
        .await
        .unwrap_err();
    assert!(matches!(paused, PaceSkip::Paused { .. }), "{paused:?}");
    // The probe waits for the probe time (10 × 2^2 = 40 s: the pause lifts the back-off
    // cap up to a day), fails, and the next probe waits twice as long.
    let before = Instant::now();
    let mut probe = pacer
        .acquire(&origin(), "a.test", None, true, WaitLimit::default())
        .await
        .unwrap();
    assert_eq!(Instant::now() - before, Duration::from_secs(40));
    probe.learn(failure());
    drop(probe);
    let mut probe = pacer
        .acquire(&origin(), "a.test", None, true, WaitLimit::default())
        .await
        .unwrap();
    assert_eq!(probe.waited(), Duration::from_secs(80));
    probe.learn(Learned::Success);
    drop(probe);
    assert_eq!(turn(&pacer, "a.test", None).await.waited(), SECOND);
}

#[tokio::test(start_paused = true)]
async fn the_wait_budget_is_shared_and_the_request_that_would_exceed_it_is_skipped() {
    let pacer = Pacer::new(PacerConfig::analysis());
    let budget = WaitBudget::new(10 * SECOND);
    let limit = WaitLimit {
        budget: Some(&budget),
        ..WaitLimit::default()
    };
    let delay = Some(4 * SECOND);
    for expected in [0, 4, 4] {
        let permit = pacer
            .acquire(&origin(), "a.test", delay, false, limit)
            .await
            .unwrap();
        assert_eq!(permit.waited().as_secs(), expected);
    }
    assert_eq!(budget.left(), 2 * SECOND);
    let skipped = pacer
        .acquire(&origin(), "a.test", delay, false, limit)
        .await
        .unwrap_err();
    assert_eq!(
        skipped,
        PaceSkip::WaitBudget {
            needed: 4 * SECOND,
            left: 2 * SECOND,
            reason: WaitReason::CrawlDelay
        }
    );
    // Skipping costs nothing: a request to a host without crawl-delay still goes.
    assert!(pacer
        .acquire(&origin(), "b.test", None, false, limit)
        .await
        .is_ok());
}

#[tokio::test(start_paused = true)]
async fn no_request_starts_after_the_deadline() {
    let pacer = Pacer::new(PacerConfig::default());
    drop(turn(&pacer, "a.test", Some(30 * SECOND)).await);
    let limit = WaitLimit {
        deadline: Some(Deadline::after(10 * SECOND)),
        ..WaitLimit::default()
    };
    let skipped = pacer
        .acquire(&origin(), "a.test", Some(30 * SECOND), false, limit)
        .await
        .unwrap_err();
    assert!(matches!(skipped, PaceSkip::Deadline { .. }), "{skipped:?}");
    let not_now = pacer
        .acquire(
            &origin(),
            "a.test",
            Some(30 * SECOND),
            false,
            WaitLimit {
                max_wait: Some(Duration::ZERO),
                ..WaitLimit::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(
        not_now,
        PaceSkip::NotBefore {
            reason: WaitReason::CrawlDelay,
            ..
        }
    ));
}

#[tokio::test(start_paused = true)]
async fn state_exported_by_one_process_holds_in_another() {
    let first = Pacer::new(PacerConfig::default());
    request(&first, failure()).await;
    let snapshot = first.export(&origin()).unwrap();
    assert_eq!(snapshot.failures, 1);
    let json = serde_json::to_string(&snapshot).unwrap();
    let next_start = snapshot.next_start.unwrap();
    let wait = next_start.duration_since(jiff::Timestamp::now());
    assert!(wait.as_secs() >= 29 && wait.as_secs() <= 30, "{wait:?}");

    let second = Pacer::new(PacerConfig::default());
    second.import(&origin(), &serde_json::from_str(&json).unwrap());
    let permit = turn(&second, "a.test", None).await;
    let waited = permit.waited().as_secs();
    assert!((29..=30).contains(&waited), "{waited}");
}

#[tokio::test(start_paused = true)]
async fn the_pace_counts_from_the_answer_when_one_was_marked() {
    let pacer = Pacer::new(PacerConfig::default());
    let crawl_delay = Some(2 * SECOND);
    // A request whose connection took 300 ms before the server saw it: the answer is marked.
    let first = turn(&pacer, "a.test", crawl_delay).await;
    advance(Duration::from_millis(300)).await;
    first.answered();
    let answered_at = Instant::now();
    drop(first);
    // The next request of the origin (another host) waits the pace from the answer...
    let other = turn(&pacer, "b.test", None).await;
    assert_eq!(Instant::now() - answered_at, SECOND);
    drop(other);
    // ...and the host's crawl-delay counts from its answer too.
    let again = turn(&pacer, "a.test", crawl_delay).await;
    assert_eq!(Instant::now() - answered_at, 2 * SECOND);
    drop(again);
}

/// Overrides as an operator sets them: a floor for one origin, a host held.
#[derive(Debug, Default)]
struct Operator {
    floor: std::sync::Mutex<Option<Duration>>,
    held: std::sync::Mutex<Vec<String>>,
}

impl fetch::Overrides for Operator {
    fn floor(&self, key: &OriginKey, _host: &str) -> Option<Duration> {
        (*key == origin())
            .then(|| *self.floor.lock().unwrap())
            .flatten()
    }
    fn held(&self, host: &str) -> bool {
        self.held.lock().unwrap().iter().any(|h| h == host)
    }
}

#[tokio::test(start_paused = true)]
async fn an_operators_floor_slows_the_origin_and_a_held_host_gets_no_turn() {
    let operator = Arc::new(Operator::default());
    let pacer = Pacer::new(PacerConfig::default())
        .with_overrides(Arc::clone(&operator) as Arc<dyn fetch::Overrides>);
    let first = request(&pacer, Learned::Success).await;
    let second = request(&pacer, Learned::Success).await;
    assert_eq!(second - first, SECOND, "the pace");
    *operator.floor.lock().unwrap() = Some(5 * SECOND);
    let third = request(&pacer, Learned::Success).await;
    assert_eq!(
        third - second,
        5 * SECOND,
        "the floor, for every host of the origin"
    );
    let snapshot = pacer.export(&origin()).unwrap();
    let next = snapshot.next_start.unwrap();
    let last = snapshot.last_start.unwrap();
    assert!(
        next.duration_since(last) >= jiff::SignedDuration::from_millis(4_990),
        "the floor is part of the exported next start: {last} -> {next}"
    );
    // A floor under the pace changes nothing.
    *operator.floor.lock().unwrap() = Some(SECOND / 10);
    let fourth = request(&pacer, Learned::Success).await;
    assert_eq!(fourth - third, SECOND);
    operator.held.lock().unwrap().push("a.test".into());
    let held = pacer
        .acquire(&origin(), "a.test", None, false, WaitLimit::default())
        .await
        .unwrap_err();
    assert_eq!(held, PaceSkip::Held);
    // A probe is a request too.
    let held = pacer
        .acquire(&origin(), "a.test", None, true, WaitLimit::default())
        .await
        .unwrap_err();
    assert_eq!(held, PaceSkip::Held);
    let other = pacer
        .acquire(&origin(), "b.test", None, false, WaitLimit::default())
        .await;
    assert!(other.is_ok(), "other hosts of the origin go on");
}

#[tokio::test(start_paused = true)]
async fn a_robots_txt_answer_between_failures_does_not_reset_the_back_off() {
    let config = PacerConfig {
        pause_after: 0,
        ..PacerConfig::default()
    };
    let base = config.backoff_base;
    let pacer = Pacer::new(config);
    let first = request(&pacer, failure()).await;
    // robots.txt answers 200 between the failures.
    let robots = request(&pacer, Learned::from_robots_txt(StatusCode::OK, None)).await;
    assert_eq!(robots - first, base);
    let second = request(&pacer, failure()).await;
    let third = request(&pacer, Learned::Success).await;
    assert_eq!(
        third - second,
        2 * base,
        "the second failure in a row doubles"
    );
    // A page's answer ended the run: the next failure waits the base again.
    let fourth = request(&pacer, failure()).await;
    let fifth = request(&pacer, Learned::Success).await;
    assert_eq!((fourth - third, fifth - fourth), (config.pace, base));
}

#[tokio::test(start_paused = true)]
async fn an_origin_taken_over_waits_a_full_pace_crawl_delay_and_back_off_first() {
    let pacer = Pacer::new(PacerConfig::default());
    let key = origin();
    // Known: a request long ago; nothing holds the next one.
    request(&pacer, Learned::Success).await;
    advance(10 * SECOND).await;
    let taken = Instant::now();
    pacer.unsure(&key);
    let first = turn(&pacer, "a.test", Some(3 * SECOND)).await;
    assert_eq!(Instant::now() - taken, 3 * SECOND, "the host's crawl-delay");
    drop(first);
    advance(10 * SECOND).await;
    // With failures known, their back-off counts from the takeover too.
    let mut snapshot = pacer.export(&key).unwrap();
    snapshot.failures = 2;
    snapshot.not_before = None;
    pacer.import(&key, &snapshot);
    let taken = Instant::now();
    pacer.unsure(&key);
    drop(turn(&pacer, "a.test", None).await);
    assert_eq!(Instant::now() - taken, pacer.config().backoff_base * 2);
    // Once a request started, the last start is known again.
    let known = Instant::now();
    drop(turn(&pacer, "a.test", None).await);
    assert_eq!(Instant::now() - known, SECOND);
}

#[tokio::test(start_paused = true)]
async fn merged_origins_share_one_turn_and_the_stricter_state() {
    let pacer = Arc::new(Pacer::new(PacerConfig::default()));
    let (a, b) = (OriginKey::new("a"), OriginKey::new("b"));
    let limit = WaitLimit::default();
    let t0 = Instant::now();
    let held = pacer
        .acquire(&a, "a.test", None, false, limit)
        .await
        .unwrap();
    // A request to origin a waits for a's turn...
    let waiting = {
        let pacer = Arc::clone(&pacer);
        let a = a.clone();
        tokio::spawn(async move {
            drop(
                pacer
                    .acquire(&a, "a.test", None, false, WaitLimit::default())
                    .await
                    .unwrap(),
            );
            Instant::now()
        })
    };
    tokio::task::yield_now().await;
    // ... when a turns out to be b's infrastructure.
    pacer.merge(&a, &b);
    // b's next request keeps a's pace (a's request started at t0).
    let on_b = pacer
        .acquire(&b, "b.test", None, false, limit)
        .await
        .unwrap();
    assert_eq!(Instant::now() - t0, SECOND);
    drop(held);
    // The waiting request now waits for the merged origin's turn, held by b's request.
    advance(5 * SECOND).await;
    drop(on_b);
    assert_eq!(waiting.await.unwrap() - t0, 6 * SECOND);
    // Either name is one origin: the pace counts from the last request to either.
    drop(
        pacer
            .acquire(&b, "b.test", None, false, limit)
            .await
            .unwrap(),
    );
    assert_eq!(Instant::now() - t0, 7 * SECOND);
}
