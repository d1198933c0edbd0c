//! A fixed-rate HTTP load generator for loopback benchmarks (wrk2's method): request `n` is
//! scheduled at `start + n / rate` whatever happened to the earlier ones, and its latency is
//! measured from that scheduled start, so a stall is counted in every request it delays (no
//! coordinated omission). Each request has a deadline, and the run ends after `rate × seconds`
//! requests: it always stops by itself.

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// How long one request may take before it counts as an error (its latency is then this).
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// What one run measured.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Requests sent.
    pub requests: usize,
    /// Median latency from the scheduled start.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// 99.9th percentile.
    pub p999: Duration,
    /// The slowest.
    pub max: Duration,
    /// The largest answer body, in bytes.
    pub largest: usize,
    /// Answers that were not 2xx, failed or passed the deadline.
    pub errors: usize,
}

/// One request's outcome: latency from its scheduled start, success, body size.
type Outcome = (Duration, bool, usize);

/// Request `paths` in turn (round robin) at `rate` per second for `seconds`, against `addr`.
pub async fn run(addr: SocketAddr, paths: &[String], rate: u64, seconds: u64) -> Figures {
    let client: Client<_, Empty<bytes::Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let total = usize::try_from(rate.saturating_mul(seconds)).unwrap_or(usize::MAX);
    let interval = Duration::from_nanos(1_000_000_000 / rate.max(1));
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for (n, path) in paths.iter().cycle().take(total).enumerate() {
        let scheduled = start + interval.saturating_mul(u32::try_from(n).unwrap_or(u32::MAX));
        tokio::time::sleep_until(scheduled).await;
        let Ok(uri) = format!("http://{addr}{path}").parse::<http::Uri>() else {
            tasks.push(tokio::spawn(async { (Duration::ZERO, false, 0) }));
            continue;
        };
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let answer = tokio::time::timeout(REQUEST_DEADLINE, async {
                let response = client.get(uri).await.ok()?;
                let ok = response.status().is_success();
                let body = response.into_body().collect().await.ok()?;
                Some((ok, body.to_bytes().len()))
            })
            .await;
            let (ok, size) = answer.ok().flatten().unwrap_or((false, 0));
            (scheduled.elapsed(), ok, size)
        }));
    }
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(total);
    for task in tasks {
        // A task that panicked counts as an error at the deadline.
        outcomes.push(task.await.unwrap_or((REQUEST_DEADLINE, false, 0)));
    }
    figures(outcomes)
}

fn figures(outcomes: Vec<Outcome>) -> Figures {
    let mut latencies: Vec<Duration> = outcomes.iter().map(|o| o.0).collect();
    latencies.sort_unstable();
    let at = |q: f64| {
        let index = ((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1));
        latencies.get(index).copied().unwrap_or_default()
    };
    Figures {
        requests: outcomes.len(),
        p50: at(0.50),
        p99: at(0.99),
        p999: at(0.999),
        max: latencies.last().copied().unwrap_or_default(),
        largest: outcomes.iter().map(|o| o.2).max().unwrap_or(0),
        errors: outcomes.iter().filter(|o| !o.1).count(),
    }
}

/// The load average (1, 5 and 15 minutes) as `uptime` shows it, for the record.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// One row of the figures table: `label`, then the requests at `rate`, the latencies, the
/// largest answer, the errors and the load average measured before the run.
pub fn table_row(label: &str, f: &Figures, rate: u64, load: &str) -> String {
    format!(
        "| {label} | {} at {rate}/s | {} | {} | {} | {} | {} B | {} | {load} |",
        f.requests,
        ms(f.p50),
        ms(f.p99),
        ms(f.p999),
        ms(f.max),
        f.largest,
        f.errors
    )
}
