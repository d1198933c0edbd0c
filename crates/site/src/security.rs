//! The headers every answer of the site carries.
//!
//! The pages need no script, no inline style, no frame and no third party: the policy allows
//! only the site's own stylesheet and images (icons), and forms that post back to the site.
//! Charts are inline SVG styled with presentation attributes, which the policy does not
//! restrict.

use axum::Router;
use http::header::{
    CONTENT_SECURITY_POLICY, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::HeaderValue;
use tower_http::set_header::SetResponseHeaderLayer;

/// The Content-Security-Policy of every answer.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'none'; style-src 'self'; \
     img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The Referrer-Policy: addresses on this site (a paste's) never leak to another.
pub const REFERRER_POLICY_VALUE: &str = "no-referrer";

/// Adds the security headers to every answer of `router` (a handler's own value wins).
pub fn with_security_headers(router: Router) -> Router {
    router
        .layer(SetResponseHeaderLayer::if_not_present(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            REFERRER_POLICY,
            HeaderValue::from_static(REFERRER_POLICY_VALUE),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
}
