//! Render one page: navigate, answer every paused request (the page's own document from the
//! caller's response, everything else through the gate), wait for load and a quiet spell,
//! take the DOM.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, EventJavascriptDialogOpening, EventLoadEventFired,
    FrameId, HandleJavaScriptDialogParams, NavigateParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinSet;
use tokio::time::Instant;
use url::Url;

use crate::answer::{fail, fulfill};
use crate::browser::{Renderer, CLOSED_PROXY, COMMAND_TIMEOUT};
use crate::gate::{Decision, GateResponse, RequestGate, ResourceKind, SubMethod, SubRequest};
use crate::{RenderError, RenderLimits, Rendered, SubExchange, SubOutcome};

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

impl Renderer {
    /// Render `page` in a new tab of a fresh incognito browser context of this browser (no
    /// cookies, storage, cache or service workers of another page; downloads denied); the
    /// context is disposed of afterwards.
    pub async fn render<G: RequestGate>(
        &self,
        page: PageToRender,
        gate: Arc<G>,
        limits: &RenderLimits,
    ) -> Result<Rendered, RenderError> {
        let started = Instant::now();
        let deadline = started + limits.time_budget;
        let reserve = DOM_RESERVE.min(limits.time_budget / 4);
        let context = self.open_context().await?;
        let result = async {
            let tab = self.open_tab(&context).await?;
            let session = Session {
                page: tab.clone(),
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
            let result = session.run(&page.url, deadline).await;
            let _ = tokio::time::timeout(COMMAND_TIMEOUT, tab.close()).await;
            result
        }
        .await;
        // Everything the page left (storage, cache, workers) goes with its context.
        let disposed = tokio::time::timeout(
            COMMAND_TIMEOUT,
            self.browser.dispose_browser_context(context),
        )
        .await;
        match disposed {
            Ok(Ok(())) => result,
            Ok(Err(source)) => result.and(Err(RenderError::Cdp {
                step: "closing the page's context",
                source,
            })),
            Err(_) => result.and(Err(RenderError::Timeout("closing the page's context"))),
        }
    }

    async fn open_context(&self) -> Result<BrowserContextId, RenderError> {
        // The context's own proxy settings repeat the browser's: closed, loopback included.
        let params = CreateBrowserContextParams::builder()
            .dispose_on_detach(true)
            .proxy_server(CLOSED_PROXY)
            .proxy_bypass_list("<-loopback>")
            .build();
        let step = "opening a browser context";
        let id = tokio::time::timeout(COMMAND_TIMEOUT, self.browser.create_browser_context(params))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        let deny = SetDownloadBehaviorParams::builder()
            .behavior(SetDownloadBehaviorBehavior::Deny)
            .browser_context_id(id.clone())
            .build()
            .map_err(RenderError::Config)?;
        let step = "denying downloads";
        tokio::time::timeout(COMMAND_TIMEOUT, self.browser.execute(deny))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        Ok(id)
    }

    async fn open_tab(&self, context: &BrowserContextId) -> Result<Page, RenderError> {
        let params = CreateTargetParams::builder()
            .url("about:blank")
            .browser_context_id(context.clone())
            .build()
            .map_err(RenderError::Config)?;
        let step = "opening a tab";
        let tab = tokio::time::timeout(COMMAND_TIMEOUT, self.browser.new_page(params))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
        let step = "preparing the tab";
        let no_workers = AddScriptToEvaluateOnNewDocumentParams::new(NO_SERVICE_WORKER_SCRIPT);
        tokio::time::timeout(COMMAND_TIMEOUT, tab.execute(no_workers))
            .await
            .map_err(|_| RenderError::Timeout(step))?
            .map_err(RenderError::cdp(step))?;
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
                        return Err(RenderError::Navigation(error));
                    }
                }
                Some(event) = paused.next() => self.on_paused(&event).await,
                Some(_) = loads.next() => {
                    self.load_fired = true;
                    self.last_activity = Instant::now();
                }
                Some(_) = dialogs.next() => {
                    // No one answers a dialog: it is dismissed so that the page goes on.
                    let dismiss = HandleJavaScriptDialogParams::new(false);
                    let _ = self.page.execute(dismiss).await;
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
        let dom = tokio::time::timeout_at(deadline, self.page.content())
            .await
            .map_err(|_| RenderError::Timeout("reading the DOM"))?
            .map_err(RenderError::cdp("reading the DOM"))?;
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
                fulfill(&self.page, id, &document).await;
                return;
            }
        }
        if kind == ResourceKind::Document && self.main_frame.as_ref() == Some(&event.frame_id) {
            // A script navigating the page elsewhere is not followed (no clicks, no
            // redirects by script).
            fail(&self.page, id).await;
            self.exchanges.push(record(SubOutcome::NavigationRefused));
            return;
        }
        let method = match event.request.method.as_str() {
            "GET" => SubMethod::Get,
            "HEAD" => SubMethod::Head,
            _ => {
                fail(&self.page, id).await;
                self.exchanges.push(record(SubOutcome::MethodRefused));
                return;
            }
        };
        let url = match Url::parse(&event.request.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
            _ => {
                fail(&self.page, id).await;
                self.exchanges.push(record(SubOutcome::NotHttp));
                return;
            }
        };
        if kind == ResourceKind::Other && url.path() == "/favicon.ico" {
            // The browser's own request for a tab icon, not the page's: never made.
            fail(&self.page, id).await;
            self.exchanges.push(record(SubOutcome::BrowserOwn));
            return;
        }
        if self.requests >= self.limits.max_requests {
            fail(&self.page, id).await;
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
    match tokio::time::timeout_at(deadline, gate.decide(request)).await {
        Ok(Decision::Allow(response)) => {
            exchange.outcome = SubOutcome::Answered {
                status: response.status,
                bytes: response.body.len(),
            };
            fulfill(&page, id, &response).await;
        }
        Ok(Decision::Deny(reason)) => {
            exchange.outcome = SubOutcome::Denied(reason);
            fail(&page, id).await;
        }
        Err(_) => fail(&page, id).await,
    }
    exchange.at = jiff::Timestamp::now();
    exchange
}
