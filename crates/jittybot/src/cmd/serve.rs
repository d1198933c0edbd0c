//! `jittybot serve`: RobotsTxtParser the service. The JSON API and the pages (`crates/site`,
//! rendering what the service decides), the analysis workers, the schedule and the hourly
//! retention pass, on one store.

use std::io::{BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use audit::crawlers::BOT_TOKEN;
use db::DbTarget;
use fetch::ResolvePin;
use service::client::TrustedProxies;
use service::{ServeOptions, Service, ServiceConfig, Store, SystemClock};
use url::Url;

/// The store used when `--db` is not given: a SQLite file in the current directory, created
/// on first run.
pub const DEFAULT_DB: &str = "robotstxtparser.sqlite";

/// `--db`, shared by the service's commands.
#[derive(Debug, clap::Args)]
pub struct DbArg {
    /// The store: a SQLite file (created on first run) or a postgres:// URL.
    #[arg(long, value_name = "PATH|URL", default_value = DEFAULT_DB)]
    pub db: String,
}

impl DbArg {
    /// Open (and migrate) the store.
    pub async fn open(&self) -> anyhow::Result<Store> {
        let target: DbTarget = self.db.parse()?;
        Store::open(&target)
            .await
            .with_context(|| format!("cannot open the store {target}"))
    }
}

/// Arguments of `jittybot serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArg,
    /// The address to listen on (port 0: any free port, printed on start).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The address the public reaches the service at (absolute links, the bot's User-Agent
    /// info URL); the listen address by default.
    #[arg(long, value_name = "URL")]
    public_url: Option<Url>,
    /// The page about the bot its User-Agent points to; the service's own `/bot` page by
    /// default.
    #[arg(long, value_name = "URL")]
    info_url: Option<Url>,
    /// Do not run the schedule in this process (people's analyses still run).
    #[arg(long)]
    no_scheduler: bool,
    /// A reverse proxy's network (CIDR, e.g. 10.0.0.0/8 or 127.0.0.1/32) whose
    /// X-Forwarded-For header names the client; repeatable. Without it the header is ignored
    /// and each peer address (an IPv6 /64) is a client of its own.
    #[arg(long = "trusted-proxy", value_name = "CIDR")]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// A hosts(5) file (`ADDR NAME...`) pinning names to addresses on every port.
    #[arg(long, value_name = "FILE")]
    hosts: Option<PathBuf>,
    #[command(flatten)]
    network: super::NetworkArgs,
}

/// Logs at `info` when `RUST_LOG` does not say otherwise: a service should say what it does.
fn init_logs() {
    if std::env::var_os("RUST_LOG").is_some() {
        return; // main() installed the subscriber RUST_LOG asks for.
    }
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .finish();
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutting down");
}

/// Runs the service until Ctrl-C or SIGTERM.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    init_logs();
    if let Some(path) = &args.hosts {
        let file =
            std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        for pin in crawl::input::parse_hosts(path, BufReader::new(file))? {
            args.network.add_pin(ResolvePin {
                host: pin.name,
                port: 0,
                addresses: vec![pin.addr],
            });
        }
    }
    // Before the runtime opens anything: connections are capped to fit the limit.
    match service::connections::raise_fd_limit() {
        Ok(limit) => tracing::info!(files = ?limit, "file limit"),
        Err(error) => tracing::warn!(error = %error, "cannot raise the file limit"),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let store = args.db.open().await?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let local = listener.local_addr()?;
    let public_url = match args.public_url {
        Some(url) => url,
        None => Url::parse(&format!("http://{local}/"))?,
    };
    let info_url = match &args.info_url {
        Some(url) => url.to_string(),
        None => service::paths::absolute(&public_url, "/bot"),
    };
    let fetcher = args.network.fetcher(BOT_TOKEN, &info_url)?;
    let limits = audit::Limits {
        analysis_budget: args.network.timeout(),
        ..audit::Limits::default()
    };
    let config = ServiceConfig {
        limits,
        trusted_proxies: TrustedProxies::new(args.trusted_proxies),
        ..ServiceConfig::new(public_url.clone())
    };
    let sandbox = icon::Sandbox::current_exe(icon::DECODE_SUBCOMMAND)?;
    let icons =
        service::icons::FetchedIcons::new(fetcher.clone(), icon::IconDecoder::Sandboxed(sandbox));
    let service = Service::new(store, fetcher, config, Arc::new(SystemClock));
    service.set_icon_source(Arc::new(icons));
    let app = service::router(service.clone()).merge(site::router(service.clone()));
    println!("RobotsTxtParser listening on http://{local}/ (public address {public_url})");
    let _ = std::io::stdout().flush();
    let options = ServeOptions {
        scheduler: !args.no_scheduler,
        maintenance: true,
    };
    service::serve(service.clone(), app, listener, options, shutdown_signal()).await?;
    service.store().close().await;
    Ok(())
}
