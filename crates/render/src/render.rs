//! Render one page: navigate, answer every paused request (the page's own document from the
//! caller's response, everything else through the gate), wait for load and a quiet spell,
//! take the DOM.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::network;
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventJavascriptDialogOpening, EventLoadEventFired,
    FrameId, HandleJavaScriptDialogParams, NavigateParams, SetLifecycleEventsEnabledParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinSet;
use tokio::time::Instant;
use url::Url;

use crate::answer::{fail, fulfill};
use crate::browser::{Renderer, CLOSED_PROXY, HUNG_AFTER};
use crate::gate::{Decision, GateResponse, RequestGate, ResourceKind, SubMethod, SubRequest};
use crate::timing::{self, Phase};
use crate::{Refused, RenderError, RenderLimits, Rendered, SubExchange, SubOutcome};

/// The part of the time budget kept for taking the DOM once the page has had its time.
pub const DOM_RESERVE: Duration = Duration::from_secs(2);

/// A page to render: its URL and the response the caller already fetched for it.
#[derive(Clone, Debug)]
pub struct PageToRender {
    /// The page's URL (the final URL of the caller's fetch).
    pub url: Url,
    /// Its response; the browser is given it instead of fetching the page again.
    pub document: GateResponse,
}

/// What one render is doing.
struct Session<G: RequestGate> {
    page: Page,
    gate: Arc<G>,
    document: Option<GateResponse>,
    main_frame: Option<FrameId>,
    requests: usize,
    exchanges: Vec<SubExchange>,
    tasks: JoinSet<SubExchange>,
    load_fired: bool,
    last_activity: Instant,
    /// The end of the page's time: gate answers and waiting stop here.
    loop_deadline: Instant,
    limits: RenderLimits,
}

/// Run in every frame of a page before its own scripts: the page cannot register a service
/// worker (one would outlive the page and make requests of its own).
pub const NO_SERVICE_WORKER_SCRIPT: &str = "(function () { try { \
    Object.defineProperty(Navigator.prototype, 'serviceWorker', \
    { get: function () { return undefined; }, configurable: false }); } catch (e) {} })();";

/// What a render left open in the browser, closed once the page's result is known.
#[derive(Debug, Default)]
pub(crate) struct Opened {
    context: Option<BrowserContextId>,
}

/// How the browser answered while a page of it was being closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Health {
    /// It answered, however late: it is kept.
    Answering,
    /// It answered nothing for the hung limit: it is replaced.
    Silent,
    /// Its process or its DevTools connection is gone.
    Gone,
}

impl Renderer {
    /// Render `page` in a new tab of a fresh incognito browser context of this browser (no
    /// cookies, storage, cache or service workers of another page; downloads denied); the
    /// context is disposed of afterwards. A browser that answers nothing for [`HUNG_AFTER`]
    /// while the page is closed makes the render fail with [`RenderError::Hung`].
    pub async fn render<G: RequestGate>(
        &self,
        page: PageToRender,
        gate: Arc<G>,
        limits: &RenderLimits,
    ) -> Result<Rendered, RenderError> {
        let (result, opened) = self.render_open(page, gate, limits).await;
        match self.close_page(opened, HUNG_AFTER).await {
            Health::Silent => result.and(Err(RenderError::Hung(HUNG_AFTER))),
            Health::Answering | Health::Gone => result,
        }
    }

    /// Render `page`, leaving its context open (see [`Renderer::close_page`]). Every command
    /// waits until the page's deadline, however late the browser answers: a slow browser
    /// fails the page at its deadline, it is not judged hung for it.
    pub(crate) async fn render_open<G: RequestGate>(
        &self,
        page: PageToRender,
        gate: Arc<G>,
        limits: &RenderLimits,
    ) -> (Result<Rendered, RenderError>, Opened) {
        let started = Instant::now();
        let deadline = started + limits.time_budget;
        let reserve = DOM_RESERVE.min(limits.time_budget / 4);
        let context = match self.open_context(deadline).await {
            Ok(context) => context,
            Err(e) => return (Err(e), Opened::default()),
        };
        timing::add(Phase::OpenContext, started.elapsed());
        let result = async {
            let tab_started = Instant::now();
            let tab = self.open_tab(&context, deadline).await?;
            timing::add(Phase::OpenTab, tab_started.elapsed());
            let session = Session {
                page: tab,
                gate,
                document: Some(page.document),
                main_frame: None,
                requests: 0,
                exchanges: Vec::new(),
                tasks: JoinSet::new(),
                load_fired: false,
                last_activity: started,
                loop_deadline: deadline - reserve,
                limits: limits.clone(),
            };
            session.run(&page.url, deadline).await
        }
        .await;
        let opened = Opened {
            context: Some(context),
        };
        (result, opened)
    }

    /// Dispose of what a render left open (its context and the tab in it: everything the
    /// page stored or started goes with them), waiting up to `hung_after` for the browser's
    /// answer; with no context to dispose of, `Browser.getVersion` asks whether it answers.
    pub(crate) async fn close_page(&self, opened: Opened, hung_after: Duration) -> Health {
        if !self.is_alive() {
            return Health::Gone;
        }
        let started = Instant::now();
        let answer = match opened.context {
            Some(context) => {
                let dispose = self.browser.dispose_browser_context(context);
                tokio::time::timeout(hung_after, dispose).await
            }
            None => tokio::time::timeout(hung_after, self.browser.version())
                .await
                .map(|r| r.map(drop)),
        };
        timing::add(Phase::Close, started.elapsed());
        match answer {
            _ if !self.is_alive() => Health::Gone,
            Ok(Ok(())) => Health::Answering,
            Err(_) | Ok(Err(CdpError::Timeout)) => Health::Silent,
            Ok(Err(e)) => {
                // An error the browser sent is an answer: it is alive.
                tracing::debug!(error = %e, "closing a page's context");
                Health::Answering
            }
        }
    }

    async fn open_context(&self, deadline: Instant) -> Result<BrowserContextId, RenderError> {
        // The context's own proxy settings repeat the browser's: closed, loopback included.
        let params = CreateBrowserContextParams::builder()
            .dispose_on_detach(true)
            .proxy_server(CLOSED_PROXY)
            .proxy_bypass_list("<-loopback>")
            .build();
        let step = "opening a browser context";
        let id = tokio::time::timeout_at(deadline, self.browser.create_browser_context(params))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        let deny = SetDownloadBehaviorParams::builder()
            .behavior(SetDownloadBehaviorBehavior::Deny)
            .browser_context_id(id.clone())
            .build()
            .map_err(|reason| RenderError::Config(Refused(reason)))?;
        let step = "denying downloads";
        tokio::time::timeout_at(deadline, self.browser.execute(deny))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        Ok(id)
    }

    async fn open_tab(
        &self,
        context: &BrowserContextId,
        deadline: Instant,
    ) -> Result<Page, RenderError> {
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .browser_context_id(context.clone())
            .build()
            .map_err(|reason| RenderError::Config(Refused(reason)))?;
        let step = "opening a tab";
        let tab = tokio::time::timeout_at(deadline, self.browser.new_page(params))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        let step = "preparing the tab";
        let no_workers = AddScriptToEvaluateOnNewDocumentParams::new(NO_SERVICE_WORKER_SCRIPT);
        // The DevTools client enables the Network domain and lifecycle events for every tab;
        // nothing here reads them (requests are seen paused, through the Fetch domain, and
        // the load event is the Page domain's), and each is a message the browser writes and
        // the client parses, several per request: turned off, in the same round trip.
        let quiet_network = tab.execute(network::DisableParams::default());
        let quiet_lifecycle = tab.execute(SetLifecycleEventsEnabledParams::new(false));
        let (added, _, _) = tokio::time::timeout_at(
            deadline,
            futures::future::join3(tab.execute(no_workers), quiet_network, quiet_lifecycle),
        )
        .await
        .map_err(|_| RenderError::Timeout(step))?;
        added.map_err(RenderError::cdp(step))?;
        Ok(tab)
    }
}

impl<G: RequestGate> Session<G> {
    async fn run(mut self, url: &Url, deadline: Instant) -> Result<Rendered, RenderError> {
        let cdp = RenderError::cdp("listening");
        let mut paused = self
            .page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(cdp)?;
        let cdp = RenderError::cdp("listening");
        let mut loads = self
            .page
            .event_listener::<EventLoadEventFired>()
            .await
            .map_err(cdp)?;
        let cdp = RenderError::cdp("listening");
        let mut dialogs = self
            .page
            .event_listener::<EventJavascriptDialogOpening>()
            .await
            .map_err(cdp)?;
        let page = self.page.clone();
        let navigate = page.execute(NavigateParams::new(url.as_str()));
        tokio::pin!(navigate);
        let navigation_started = Instant::now();
        let mut loaded_at = None;
        let mut navigated = false;
        let mut time_out = false;
        loop {
            let quiet = self.load_fired && self.tasks.is_empty();
            let settled_at = self.last_activity + self.limits.settle;
            let wake = if quiet {
                settled_at.min(self.loop_deadline)
            } else {
                self.loop_deadline
            };
            tokio::select! {
                result = &mut navigate, if !navigated => {
                    navigated = true;
                    let reply = result.map_err(RenderError::cdp("navigating"))?;
                    if let Some(error) = reply.result.error_text.clone() {
                        return Err(RenderError::Navigation {
                            url: url.clone(),
                            source: crate::NetError(error),
                        });
                    }
                }
                Some(event) = paused.next() => self.on_paused(&event).await,
                Some(_) = loads.next() => {
                    self.load_fired = true;
                    self.last_activity = Instant::now();
                    if loaded_at.is_none() {
                        timing::add(Phase::Load, navigation_started.elapsed());
                        loaded_at = Some(self.last_activity);
                    }
                }
                Some(_) = dialogs.next() => {
                    // No one answers a dialog: it is dismissed so that the page goes on.
                    let dismiss = HandleJavaScriptDialogParams::new(false);
                    let until = self.loop_deadline;
                    let _ = tokio::time::timeout_at(until, self.page.execute(dismiss)).await;
                }
                Some(done) = self.tasks.join_next() => {
                    if let Ok(exchange) = done {
                        self.exchanges.push(exchange);
                    }
                    self.last_activity = Instant::now();
                }
                _ = tokio::time::sleep_until(wake) => {
                    if Instant::now() >= self.loop_deadline {
                        time_out = true;
                        break;
                    }
                    if quiet && Instant::now() >= settled_at {
                        break;
                    }
                }
            }
        }
        // Requests still waiting for a turn or a response are dropped with the tab.
        self.tasks.abort_all();
        if let Some(at) = loaded_at {
            timing::add(Phase::Settle, at.elapsed());
        }
        let reading = Instant::now();
        let dom = tokio::time::timeout_at(deadline, self.page.content())
            .await
            .map_err(|_| RenderError::Timeout("reading the DOM"))?
            .map_err(RenderError::cdp("reading the DOM"))?;
        timing::add(Phase::ReadDom, reading.elapsed());
        Ok(Rendered::new(
            url.clone(),
            dom,
            self.exchanges,
            self.load_fired,
            time_out,
            &self.limits,
        ))
    }

    async fn on_paused(&mut self, event: &EventRequestPaused) {
        let id = event.request_id.clone();
        let kind = ResourceKind::from_devtools(event.resource_type.as_ref());
        let record = |outcome: SubOutcome| SubExchange {
            url: event.request.url.clone(),
            method: event.request.method.clone(),
            kind,
            at: jiff::Timestamp::now(),
            outcome,
        };
        if kind == ResourceKind::Document && self.main_frame.is_none() {
            if let Some(document) = self.document.take() {
                // The page itself: the caller fetched it already.
                self.main_frame = Some(event.frame_id.clone());
                fulfill(&self.page, id, &document, self.loop_deadline).await;
                return;
            }
        }
        if kind == ResourceKind::Document && self.main_frame.as_ref() == Some(&event.frame_id) {
            // A script navigating the page elsewhere is not followed (no clicks, no
            // redirects by script).
            fail(&self.page, id, self.loop_deadline).await;
            self.exchanges.push(record(SubOutcome::NavigationRefused));
            return;
        }
        let method = match event.request.method.as_str() {
            "GET" => SubMethod::Get,
            "HEAD" => SubMethod::Head,
            _ => {
                fail(&self.page, id, self.loop_deadline).await;
                self.exchanges.push(record(SubOutcome::MethodRefused));
                return;
            }
        };
        let url = match Url::parse(&event.request.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
            _ => {
                fail(&self.page, id, self.loop_deadline).await;
                self.exchanges.push(record(SubOutcome::NotHttp));
                return;
            }
        };
        if kind == ResourceKind::Other && url.path() == "/favicon.ico" {
            // The browser's own request for a tab icon, not the page's: never made.
            fail(&self.page, id, self.loop_deadline).await;
            self.exchanges.push(record(SubOutcome::BrowserOwn));
            return;
        }
        if self.requests >= self.limits.max_requests {
            fail(&self.page, id, self.loop_deadline).await;
            self.exchanges.push(record(SubOutcome::OverRequestBudget));
            return;
        }
        self.requests += 1;
        let request = SubRequest {
            url,
            method,
            kind,
            deadline: self.loop_deadline,
        };
        let exchange = record(SubOutcome::OverTimeBudget);
        let (gate, page) = (Arc::clone(&self.gate), self.page.clone());
        self.tasks
            .spawn(ask_gate(gate, page, id, request, exchange));
    }
}

/// Ask the gate (within the page's time), then answer the browser.
async fn ask_gate<G: RequestGate>(
    gate: Arc<G>,
    page: Page,
    id: chromiumoxide::cdp::browser_protocol::fetch::RequestId,
    request: SubRequest,
    mut exchange: SubExchange,
) -> SubExchange {
    let deadline = request.deadline;
    let asked = Instant::now();
    let decision = tokio::time::timeout_at(deadline, gate.decide(request)).await;
    timing::add(Phase::Gate, asked.elapsed());
    match decision {
        Ok(Decision::Allow(response)) => {
            exchange.outcome = SubOutcome::Answered {
                status: response.status,
                bytes: response.body.len(),
            };
            fulfill(&page, id, &response, deadline).await;
        }
        Ok(Decision::Deny(reason)) => {
            exchange.outcome = SubOutcome::Denied(reason);
            fail(&page, id, deadline).await;
        }
        Err(_) => fail(&page, id, deadline).await,
    }
    exchange.at = jiff::Timestamp::now();
    exchange
}
