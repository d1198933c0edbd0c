//! Prints the per-check table of `SCORING.md` from the catalogue.
fn main() {
    println!("| check | what it finds | severity | points each | at most |");
    println!("|---|---|---|---|---|");
    for check in audit::CHECKS {
        let points = audit::score::points(check.severity);
        let max = points * audit::score::MAX_OCCURRENCES_PER_CHECK as u32;
        println!(
            "| `{}` | {} | {} | {} | {} |",
            check.id,
            check.title,
            check.severity,
            points,
            if check.severity == audit::Severity::Notice {
                format!("{max} (notices: 5 in all)")
            } else {
                max.to_string()
            }
        );
    }
}
