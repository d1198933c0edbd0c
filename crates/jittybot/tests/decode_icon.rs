//! `jittybot __decode-icon`, the helper `serve` decodes site icons in: the same answers as
//! the icon crate's own helper, and a bomb stops only it.

use icon::{Budget, IconError, Sandbox, DECODE_SUBCOMMAND};

fn sandbox() -> Sandbox {
    Sandbox::new(env!("CARGO_BIN_EXE_jittybot"), [DECODE_SUBCOMMAND])
}

#[tokio::test]
async fn the_hidden_subcommand_decodes_icons_and_contains_bombs() {
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>"#;
    let png = sandbox()
        .decode(svg, Some("image/svg+xml"))
        .await
        .expect("an icon");
    assert_eq!(png, icon::decode_icon(svg, None).expect("an icon"));
    // A pattern tile of 16,000² pixels: a 1 GB allocation, refused by the helper's limit
    // (through jemalloc, the binary's allocator, as through the system's).
    let bomb = br##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 50"><defs><pattern id="p" width="50" height="50" patternUnits="userSpaceOnUse" patternTransform="scale(250)"><circle cx="25" cy="25" r="20"/></pattern></defs><rect width="50" height="50" fill="url(#p)"/></svg>"##;
    let error = sandbox()
        .decode(bomb, Some("image/svg+xml"))
        .await
        .expect_err("over budget");
    assert!(
        matches!(error, IconError::OverBudget(Budget::Memory)),
        "{error:?}"
    );
}
