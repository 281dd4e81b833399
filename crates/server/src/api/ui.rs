//! The built-in web page at `/ui/`: hand-written HTML, CSS and JavaScript from `crates/server/ui/`, compiled into
//! the binary (no CDN, nothing fetched at run time but the API itself).
//!
//! The assets need no token (the page asks for one and sends it to the API as a bearer header); every answer
//! carries a strict Content-Security-Policy (scripts and styles from this origin only, no inline script, no
//! framing), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` and `Cache-Control: no-cache` (the
//! assets change with the binary, so a browser revalidates rather than keeping an old page). `/ui` redirects to
//! `/ui/`.

use super::contract::{Content, Operation};
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use crate::ApiError;

/// The page's path without its trailing slash (redirected to [`UI_PATH_SLASH`]).
pub(crate) const UI_PATH: &str = "/ui";
/// The page's path.
pub(crate) const UI_PATH_SLASH: &str = "/ui/";
/// The route of one asset under the page.
pub(crate) const UI_ASSET_ROUTE: &str = "/ui/{asset}";

/// What the page may load and do: its own scripts, styles, images and API calls, nothing inline, no framing.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One file of the page.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// Every file of the page; `index.html` is served at `/ui/`.
const ASSETS: [Asset; 4] = [
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../../ui/index.html"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../../ui/app.js"),
    },
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../../ui/style.css"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("../../ui/favicon.svg"),
    },
];

/// Whether `path` is the page or one of its assets (served without a token).
pub(crate) fn is_ui_path(path: &str) -> bool {
    path == UI_PATH || path.starts_with(UI_PATH_SLASH)
}

/// `GET /ui`: to `/ui/`, so the page's relative asset paths resolve under it.
pub(crate) async fn redirect() -> Redirect {
    Redirect::permanent(UI_PATH_SLASH)
}

/// `GET /ui/`: the page.
pub(crate) async fn index() -> Response {
    asset_response("index.html")
}

/// `GET /ui/{asset}`: one asset, or 404 naming it.
pub(crate) async fn asset(Path(name): Path<String>) -> Response {
    asset_response(&name)
}

fn asset_response(name: &str) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == name) else {
        return ApiError::not_found(format!("the web page has no file '{name}'")).into_response();
    };
    let mut response = (StatusCode::OK, asset.body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// `GET /ui`, described.
pub(crate) fn redirect_operation() -> Operation {
    Operation::get("getUiRedirect", "operations", "Redirects to /ui/")
        .answer(308, "To /ui/", Content::Empty)
        .header("Location", "/ui/")
        .public()
}

/// `GET /ui/`, described.
pub(crate) fn index_operation() -> Operation {
    Operation::get("getUi", "operations", "The web page")
        .answer(200, "The page", Content::Other("text/html"))
        .public()
}

/// `GET /ui/{asset}`, described.
pub(crate) fn asset_operation() -> Operation {
    Operation::get(
        "getUiAsset",
        "operations",
        "A file of the web page (app.js, style.css, favicon.svg)",
    )
    .answer(200, "The file", Content::Other("application/octet-stream"))
    .errors(&[(404, "No such file")])
    .public()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_its_script_and_style_from_files_never_inline() {
        let index = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert!(index.contains(r#"<script src="app.js" defer></script>"#));
        assert!(index.contains(r#"<link rel="stylesheet" href="style.css">"#));
        // Inline script or style would be blocked by the policy: the page must not depend on any.
        let lower = index.to_ascii_lowercase();
        assert_eq!(lower.matches("<script").count(), 1, "one script, from a file");
        assert!(!lower.contains("<style"), "no inline style element");
        assert!(!lower.contains(" style="), "no style attribute");
        assert!(
            !lower.contains(" onclick=") && !lower.contains(" onload="),
            "no inline handlers"
        );
        assert!(
            !lower.contains("http://") && !lower.contains("https://"),
            "nothing from another origin"
        );
    }

    #[test]
    fn the_script_builds_the_page_without_inner_html_or_eval() {
        let script = std::str::from_utf8(ASSETS[1].body).unwrap();
        for forbidden in [
            "innerHTML",
            "outerHTML",
            "eval(",
            "new Function",
            "document.write",
        ] {
            assert!(!script.contains(forbidden), "app.js uses {forbidden}");
        }
    }

    #[test]
    fn every_asset_has_its_content_type_and_the_policy() {
        for asset in &ASSETS {
            let response = asset_response(asset.name);
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.name);
            let headers = response.headers();
            assert_eq!(
                headers[header::CONTENT_TYPE],
                asset.content_type,
                "{}",
                asset.name
            );
            assert_eq!(headers[header::CONTENT_SECURITY_POLICY], CONTENT_SECURITY_POLICY);
            assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
            assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        }
        assert_eq!(asset_response("../Cargo.toml").status(), StatusCode::NOT_FOUND);
        assert!(is_ui_path("/ui") && is_ui_path("/ui/") && is_ui_path("/ui/app.js"));
        assert!(!is_ui_path("/uix") && !is_ui_path("/v2/ui/"));
    }
}
