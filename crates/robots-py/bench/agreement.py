"""Where jittybot_robots and Protego (Scrapy's default parser) disagree on a corpus, and why.

    python bench/agreement.py CORPUS_DIR [--examples N]

Asks both parsers the same questions (bench/corpus.py's 64 URLs per file, for each agent of
AGENTS), Protego as Scrapy uses it (the body decoded as UTF-8 with a byte order mark removed
and undecodable bytes dropped), and sorts every difference into a cause. A cause is only
given when a check confirms it: most re-ask Protego with the one thing changed that the
cause names (the file cut at 500 KiB, misspelled lines removed, ...) and require that it then
agrees; the others read the Protego rule or group that decided. A difference no check
explains is counted as "unexplained" and printed: the README's table must have none.

Reads Protego's internals (0.7) to name the rule and group it used.
"""

import argparse
import collections
import os
import re
import sys

from protego import Protego

from jittybot_robots import MAX_ROBOTS_TXT_BYTES, RobotsTxt, product_token

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

AGENTS = [
    "Googlebot",
    "Googlebot-Image",
    "bingbot",
    "MJ12bot",
    "AhrefsBot",
    "GPTBot",
    "CCBot",
    "Baiduspider",
    "YandexBot",
    "JittyBot",
    "Scrapy/2.13 (+https://scrapy.org)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
]

RFC_FIELDS = {"user-agent", "allow", "disallow", "sitemap", "crawl-delay"}
_LINE_END = re.compile(rb"\r\n|\r|\n")
# What str.splitlines() also ends lines at, besides CR and LF.
_PYTHON_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")

CAUSES = {
    "typo": "Protego reads misspelled fields (`Dissallow`, `Useragent`, `User agent`, `Sitemaps`) "
    "and lines without a colon (`Disallow /x`); RFC 9309 and the engine ignore them",
    "unknown_line_ends_agents": "Protego ends a group's list of user-agents at any other line "
    "(`Host:`, `Request-rate:`, `Noindex:`), so `User-agent: a` / `Noindex: /x` / `User-agent: b` "
    "is two groups; the engine makes one group (RFC 9309: only rules end the list)",
    "limit": "the file is longer than 500 KiB: the engine reads the first 512,000 bytes "
    "(RFC 9309 2.5), Protego reads everything",
    "starred_agent": "`User-agent: *Name*`: Protego drops the stars and reads a group for Name; "
    "RFC 9309 has no wildcard in names, the engine reads no crawler",
    "global_with_punctuation": "`User-agent: *;` (or `*/1.0`): the engine reads the * group, "
    "as the author meant; Protego reads a group for a crawler named `*;`",
    "agent_value_text": "a user-agent value with more than a token (`Googlebot/2.1`, "
    "`Googlebot Mobile`): the engine reads its product token; Protego keeps the whole value "
    "and matches it as a substring of the crawler's name",
    "name_inside_name": "Protego matches a group whose name occurs inside the crawler's name or "
    "User-Agent string (`Googlebot` for `Googlebot-Image`, `Mozilla`, `compatible`); the engine "
    "matches the crawler's product token exactly (RFC 9309 2.2.1)",
    "index_html": "`Allow: /dir/index.html`: Protego also allows `/dir/` (a rule of its own); "
    "the engine matches what is written",
    "absolute_url_rule": "a rule written as a URL (`Disallow: https://example.com/x`): Protego "
    "matches paths starting `/https://example.com/x`; the engine reads no path and never matches",
    "not_utf8": "the file is not UTF-8: Scrapy drops the bytes it cannot decode before Protego "
    "reads the rule (`/caf\\xe9` becomes `/caf`); the engine matches them percent-encoded",
    "python_line_breaks": "Python's splitlines() also ends lines at form feeds, vertical tabs "
    "and U+2028/U+2029; RFC 9309 lines end at CR and LF only",
    "percent_encoding": "the rule or URL has escapes or non-ASCII characters, which the two "
    "normalise differently (the engine: RFC 3986 canonical form, reserved escapes kept)",
}


def protego(body):
    """Protego as Scrapy's ProtegoRobotParser builds it."""
    return Protego.parse(body.decode("utf-8-sig", errors="ignore"))


def deciding_rule(parser, url, agent):
    """Protego's rule set for `agent` and its deciding rule for `url` (or None)."""
    rule_set = parser._get_matching_rule_set(agent)
    if rule_set is None:
        return None, None
    from protego._utils import _quote_path  # noqa: PLC0415 - internals, named once

    quoted = _quote_path(url)
    for rule in rule_set._rules:
        if rule.value.match(quoted):
            return rule_set, rule
    return rule_set, None


def field_of(line):
    """The field name of a line as written, lower-cased, or None without a colon."""
    text = line.split(b"#", 1)[0]
    if b":" not in text:
        return None
    return text.split(b":", 1)[0].strip().lower().decode("latin-1")


def without_lines(body, drop):
    """`body` without the lines for which `drop(line)` is true."""
    return b"\n".join(line for line in _LINE_END.split(body) if not drop(line))


def is_typo_line(line):
    text = line.split(b"#", 1)[0].strip()
    if not text:
        return False
    field = field_of(text)
    if field is None:
        return True  # "Disallow /x": Protego salvages it
    return field not in RFC_FIELDS and field.replace(" ", "-").replace("_", "-") in {
        "dissallow", "dissalow", "disalow", "diasllow", "disallaw", "useragent", "user-agent",
        "sitemaps", "site-map", "crawl-delay",
    }


def is_other_line(line):
    text = line.split(b"#", 1)[0].strip()
    field = field_of(text)
    return bool(text) and field not in RFC_FIELDS


def agrees_after(body, transform, url, agent, ours):
    changed = transform(body)
    return changed != body and protego(changed).can_fetch(url, agent) == ours


def cut_at_limit(body):
    if len(body) <= MAX_ROBOTS_TXT_BYTES:
        return body
    head = body[:MAX_ROBOTS_TXT_BYTES]
    return head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]


def user_agent_values(body):
    for line in _LINE_END.split(body):
        text = line.split(b"#", 1)[0]
        if field_of(text) == "user-agent":
            yield text.split(b":", 1)[1].strip().decode("utf-8", "replace")


def rename_agents(body, rename):
    """`body` with each user-agent value `v` replaced by `rename(v)` (None keeps it)."""
    lines = []
    for line in _LINE_END.split(body):
        text = line.split(b"#", 1)[0]
        if field_of(text) == "user-agent":
            value = text.split(b":", 1)[1].strip().decode("utf-8", "replace")
            new = rename(value)
            if new is not None:
                line = ("User-agent: " + new).encode()
        lines.append(line)
    return b"\n".join(lines)


def classify(body, agent, url, ours):
    """The cause of one difference, or "unexplained"."""
    if agrees_after(body, cut_at_limit, url, agent, ours):
        return "limit"
    if agrees_after(body, lambda b: without_lines(b, is_typo_line), url, agent, ours):
        return "typo"
    parser = protego(body)
    rule_set, rule = deciding_rule(parser, url, agent)
    theirs = rule_set.user_agent if rule_set is not None else None
    token = product_token(agent) or ""
    unmatched = "x-unmatched-name"

    def agrees(transform, asked=agent):
        changed = transform(body)
        return changed != body and protego(changed).can_fetch(url, asked) == ours

    # The group: each cause confirmed by rewriting the user-agent lines it names.
    if agrees(lambda b: rename_agents(b, lambda v: unmatched if v.startswith("*") and v.strip("*") else None)):
        return "starred_agent"
    if agrees(lambda b: rename_agents(b, lambda v: "*" if v.startswith("*") and not v.strip("*;/. 0123456789") else None)):
        return "global_with_punctuation"
    inside = lambda v: v.lower() != token.lower() and v.lower() in agent.lower()  # noqa: E731
    if theirs not in (None, "*") and inside(theirs) and agrees(
        lambda b: rename_agents(b, lambda v: unmatched if v != "*" and inside(v) else None)
    ):
        return "name_inside_name"
    if agrees(lambda b: rename_agents(b, lambda v: product_token(v) if product_token(v) not in (None, v) else None), token):
        return "agent_value_text"
    if agrees_after(body, lambda b: without_lines(b, is_other_line), url, agent, ours):
        return "unknown_line_ends_agents"
    if rule is not None:
        pattern = rule.value._pattern
        if pattern.startswith(("/http:", "/https:")) and agrees(
            lambda b: without_lines(b, lambda line: re.search(rb":\s*https?://", line) is not None)
        ):
            return "absolute_url_rule"
        if rule.field == "allow" and pattern.endswith("/$") and agrees(
            lambda b: without_lines(b, lambda line: line.split(b"#")[0].strip().endswith(b"index.html"))
        ):
            return "index_html"
    text = body.decode("utf-8-sig", errors="replace")
    if _PYTHON_LINE_BREAKS.search(text) and agrees_after(
        body,
        lambda b: _PYTHON_LINE_BREAKS.sub(" ", b.decode("utf-8", "replace")).encode(),
        url,
        agent,
        ours,
    ):
        return "python_line_breaks"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "not_utf8"
    explained = RobotsTxt(body).explain(url, agent)
    written = (explained.pattern or "") + (rule.value._pattern if rule else "") + url
    if "%" in written or not written.isascii():
        return "percent_encoding"
    return "unexplained"


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("corpus", help="a directory of robots.txt files")
    arguments.add_argument("--examples", type=int, default=1, help="examples shown per cause")
    args = arguments.parse_args()
    files = corpus.load(args.corpus)
    checks = 0
    causes = collections.Counter()
    files_by_cause = collections.defaultdict(set)
    examples = collections.defaultdict(list)
    inside = collections.Counter()
    for name, body in files:
        ours_parser = RobotsTxt(body)
        theirs_parser = protego(body)
        for url in corpus.urls(body):
            for agent in AGENTS:
                checks += 1
                ours = ours_parser.allowed(url, agent)
                if theirs_parser.can_fetch(url, agent) == ours:
                    continue
                cause = classify(body, agent, url, ours)
                causes[cause] += 1
                files_by_cause[cause].add(name)
                if len(examples[cause]) < args.examples or cause == "unexplained":
                    examples[cause].append((name, agent, url, ours))
                if cause == "name_inside_name":
                    rule_set = theirs_parser._get_matching_rule_set(agent)
                    inside[(product_token(agent), rule_set.user_agent if rule_set else None)] += 1
    differing = sum(causes.values())
    print("%d files, %d agents, %d checks: %d differences (%.4f %%) in %d files" % (
        len(files), len(AGENTS), checks, differing, 100.0 * differing / checks,
        len(set().union(*files_by_cause.values())) if files_by_cause else 0))
    print()
    print("| cause | checks | files | engine (RFC 9309) vs Protego |")
    print("|---|---|---|---|")
    for cause, count in causes.most_common():
        print("| `%s` | %d | %d | %s |" % (cause, count, len(files_by_cause[cause]), CAUSES.get(cause, "?")))
    print()
    for cause, cases in examples.items():
        for name, agent, url, ours in cases:
            print("%s: %s, %r, %s: engine %s, Protego %s" % (
                cause, name, agent, url, "allowed" if ours else "disallowed",
                "disallowed" if ours else "allowed"))
    if inside:
        print()
        print("name_inside_name, by the crawler's token and the group Protego chose:")
        for (token, group), count in inside.most_common():
            print("  %s -> %s: %d" % (token, group, count))
    return 1 if causes["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
