"""The Python API: answers, explanations, the file-level rules, and errors as exceptions."""

import random
import sys
import threading
import time

import pytest

import jittybot_robots
from jittybot_robots import (
    MAX_ROBOTS_TXT_BYTES,
    PARSE_WITHOUT_GIL_BYTES,
    Decision,
    Diagnostic,
    RobotsTxt,
    product_token,
)

ROBOTS = b"""\
User-agent: *
Disallow: /private
Crawl-delay: 1

User-agent: JittyBot
Crawl-delay: 2.5
Disallow: /search  # no search pages
Allow: /search/help

User-agent: MJ12bot
Disallow: /

Sitemap: https://example.com/sitemap.xml
Dissallow: /typo
"""

GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
SCRAPY = "Scrapy/2.13 (+https://scrapy.org)"


def test_allowed_answers_by_the_group_of_the_user_agent():
    robots = RobotsTxt(ROBOTS)
    assert not robots.allowed("https://example.com/search?q=1", "JittyBot")
    assert robots.allowed("https://example.com/search/help", "JittyBot")
    # JittyBot has a group of its own: the * rules do not apply to it.
    assert robots.allowed("https://example.com/private", "JittyBot")
    assert not robots.allowed("https://example.com/private", "OtherBot")
    assert robots.allowed("/elsewhere", "OtherBot")


def test_a_full_user_agent_string_is_read_for_its_product_token():
    robots = RobotsTxt(ROBOTS)
    assert not robots.allowed("https://example.com/search", "JittyBot/1.0 (+https://jittybot.example)")
    assert not robots.allowed("https://example.com/private", SCRAPY)
    assert not robots.allowed("https://example.com/private", GOOGLEBOT)
    assert robots.group(GOOGLEBOT) == "*"
    assert robots.group("Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)") == "MJ12bot"
    assert robots.group("JittyBot/2.0") == "JittyBot"


def test_product_token_reads_names_and_user_agent_strings():
    assert product_token(GOOGLEBOT) == "Googlebot"
    assert product_token(SCRAPY) == "Scrapy"
    assert product_token("MJ12bot") == "MJ12bot"
    assert product_token("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)") == (
        "facebookexternalhit"
    )
    chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
    assert product_token(chrome) == "Mozilla"
    for nameless in ["", "   ", "*", "/1.0"]:
        assert product_token(nameless) is None


def test_names_beyond_rfc_tokens_match_their_own_groups_only():
    robots = RobotsTxt(b"User-agent: *\nDisallow: /star\n\nUser-agent: MJ12bot\nDisallow: /mj12\n\nUser-agent: MJ\nDisallow: /mj\n")
    assert not robots.allowed("/mj12/a", "MJ12bot")
    assert robots.allowed("/mj/a", "MJ12bot")
    assert robots.allowed("/star", "MJ12bot")
    # The RFC token MJ reads "User-agent: MJ12bot" as MJ, as Google's parser does.
    assert not robots.allowed("/mj12/a", "MJ")


def test_an_agent_without_a_name_follows_the_star_groups():
    robots = RobotsTxt(ROBOTS)
    for nameless in ["", "*"]:
        assert robots.group(nameless) == "*"
        assert not robots.allowed("/private", nameless)


def test_several_agents_are_tried_in_order_of_preference():
    robots = RobotsTxt(b"User-agent: JittyBot\nDisallow: /a\n\nUser-agent: JittyBot-Image\nDisallow: /photos/\n")
    assert robots.group(["JittyBot-Image", "JittyBot"]) == "JittyBot-Image"
    assert robots.group(("OtherBot-Image", "JittyBot")) == "JittyBot"
    assert not robots.allowed("/photos/a.jpg", ["JittyBot-Image", "JittyBot"])
    assert robots.allowed("/a", ["JittyBot-Image", "JittyBot"])


def test_explain_names_the_deciding_line_rule_and_group():
    robots = RobotsTxt(ROBOTS)
    decision = robots.explain("https://example.com/search?q=1", "JittyBot/1.0")
    assert isinstance(decision, Decision)
    assert decision.allowed is False
    assert decision.line == 7
    assert decision.text == "Disallow: /search  # no search pages"
    assert (decision.kind, decision.pattern, decision.rule) == ("disallow", "/search", "Disallow: /search")
    assert decision.group == "JittyBot"
    assert decision.tokens == ["JittyBot"]
    assert decision.robots_txt_exemption is False
    assert str(decision) == decision.reason == "line 7: Disallow: /search, group JittyBot"
    assert repr(decision) == 'Decision(allowed=False, line=7, rule="Disallow: /search", group="JittyBot")'

    no_rule = robots.explain("/open", "OtherBot")
    assert (no_rule.allowed, no_rule.line, no_rule.rule, no_rule.text, no_rule.group) == (True, None, None, None, "*")
    assert str(no_rule) == "no matching rule, group *"
    itself = robots.explain("https://example.com/robots.txt", "MJ12bot")
    assert itself.allowed and itself.robots_txt_exemption
    nobody = RobotsTxt(b"User-agent: Other\nDisallow: /\n").explain("/", "JittyBot")
    assert (nobody.allowed, nobody.group, str(nobody)) == (True, None, "no group applies")


def test_crawl_delay_sitemaps_and_diagnostics():
    robots = RobotsTxt(ROBOTS)
    assert robots.crawl_delay("JittyBot") == 2.5
    assert robots.crawl_delay(SCRAPY) == 1.0
    assert robots.crawl_delay("MJ12bot") is None
    assert robots.sitemaps == ["https://example.com/sitemap.xml"]
    diagnostics = robots.diagnostics
    assert all(isinstance(d, Diagnostic) for d in diagnostics)
    typo = [d for d in diagnostics if d.kind == "unknown_field"]
    assert len(typo) == 1
    assert (typo[0].line, typo[0].text) == (14, "Dissallow: /typo")
    assert str(typo[0]) == 'line 14: unknown field "Dissallow"; line ignored: Dissallow: /typo'


def test_urls_are_matched_by_path_and_query_whatever_their_scheme():
    robots = RobotsTxt(b"User-agent: *\nDisallow: /*.pdf$\nDisallow: /hus/%C3%A5\n")
    assert not robots.allowed("https://example.com/a.pdf", "x")
    assert robots.allowed("https://example.com/a.pdf?v=2", "x")
    assert not robots.allowed("https://example.com/hus/\u00e5", "x")
    assert not robots.allowed("ftp://example.net/files/a.pdf", "x")
    assert robots.allowed("https://example.com/a.pdf#not-the-path", "x") is False


def test_the_body_is_read_as_the_engine_reads_it():
    # The same rules as bytes or str, with CR, LF or CRLF endings, behind a byte order mark.
    for ending in ["\n", "\r", "\r\n"]:
        text = ending.join(["User-agent: *", "Disallow: /a", "Disallow: /b"])
        for body in [text, text.encode(), b"\xef\xbb\xbf" + text.encode()]:
            robots = RobotsTxt(body)
            assert not robots.allowed("/a", "x") and not robots.allowed("/b", "x"), repr(body)
    # A line that is not UTF-8 is still read.
    assert not RobotsTxt(b"User-agent: *\nDisallow: /caf\xe9\n").allowed("/caf%E9", "x")


def test_only_the_first_500_kib_are_read():
    assert MAX_ROBOTS_TXT_BYTES == 512_000
    head = b"User-agent: *\nDisallow: /early\n"
    body = head + b"#" * (MAX_ROBOTS_TXT_BYTES - len(head) - 1) + b"\nDisallow: /beyond\n"
    robots = RobotsTxt(body)
    assert not robots.allowed("/early", "x")
    assert robots.allowed("/beyond", "x")
    assert robots.bytes_read == MAX_ROBOTS_TXT_BYTES
    assert "truncated_at_limit" in [d.kind for d in robots.diagnostics]


def test_wrong_arguments_raise_python_exceptions_with_messages():
    robots = RobotsTxt(ROBOTS)
    with pytest.raises(TypeError, match="bytes or str, not int"):
        RobotsTxt(42)
    with pytest.raises(TypeError, match="not bytes"):
        robots.allowed("/", b"JittyBot")
    with pytest.raises(TypeError, match="not int"):
        robots.allowed("/", 7)
    with pytest.raises(TypeError):
        robots.allowed(None, "JittyBot")
    with pytest.raises(ValueError, match="not a URL with a host"):
        robots.allowed("mailto:someone@example.com", "JittyBot")
    with pytest.raises(ValueError, match="at most 63"):
        robots.allowed("/", ["JittyBot"] * 64)
    with pytest.raises(UnicodeEncodeError):
        RobotsTxt("User-agent: *\nDisallow: /\ud800\n")


def test_arbitrary_input_never_crashes_the_interpreter():
    rng = random.Random(9309)
    alphabet = list(b"User-agent: *\nDisallow Allow Sitemap Crawl-delay : / * $ % # \r\n") + list(range(256))
    for _ in range(300):
        body = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))
        url = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)])) for _ in range(30))
        robots = RobotsTxt(body)
        for agent in ["JittyBot", "", url]:
            try:
                robots.explain("/" + url, agent)
                robots.allowed(url, agent)
            except ValueError:
                pass  # a URL without a host
        robots.diagnostics
        robots.sitemaps


def _ticks_of_another_thread_while(parse):
    """How often another Python thread ran while `parse` ran in this one."""
    ticks = 0
    started = threading.Event()
    stop = threading.Event()

    def count():
        nonlocal ticks
        started.set()
        while not stop.is_set():
            ticks += 1
            time.sleep(0)  # hands the GIL back at once

    interval = sys.getswitchinterval()
    # Long enough that, holding the GIL, this thread would not hand it over while parsing.
    sys.setswitchinterval(1.0)
    thread = threading.Thread(target=count)
    try:
        thread.start()
        started.wait()
        before = ticks
        parse()
        during = ticks - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    return during


def test_large_bodies_are_parsed_with_the_gil_released():
    rule_lines = b"".join(b"Disallow: /section-%d/*/page$\n" % i for i in range(20_000))
    large = b"User-agent: *\n" + rule_lines[: MAX_ROBOTS_TXT_BYTES - 20]
    assert len(large) >= PARSE_WITHOUT_GIL_BYTES
    small = b"User-agent: *\nDisallow: /a\n"

    def parse_many(body, count):
        def run():
            for _ in range(count):
                RobotsTxt(body).crawl_delay("JittyBot")  # the one-crawler parse
                RobotsTxt(body).sitemaps  # the full parse
        return run

    # Another thread runs while large files parse (20 parses, each a chance for it to run; it
    # usually counts hundreds of times)...
    assert _ticks_of_another_thread_while(parse_many(large, 10)) >= 5
    # ...and not while small ones do (which shows the measure can tell).
    assert _ticks_of_another_thread_while(parse_many(small, 200)) <= 2


def test_one_file_answers_many_threads_at_once():
    rule_lines = b"".join(b"Disallow: /s%d/\n" % i for i in range(10_000))
    robots = RobotsTxt(b"User-agent: JittyBot\n" + rule_lines + b"User-agent: *\nDisallow: /\n")
    assert len(rule_lines) >= PARSE_WITHOUT_GIL_BYTES
    errors = []

    def ask(agent, jittybot):
        try:
            for i in range(50):
                assert robots.allowed("/s%d/x" % (i * 7), agent) is False
                assert robots.allowed("/other", agent) is jittybot
                assert robots.explain("/s1/x", agent).group == ("JittyBot" if jittybot else "*")
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    agents = [("JittyBot", True), ("JittyBot/1.0", True), ("OtherBot", False), ("Mozilla/5.0 (compatible; OtherBot/1.0)", False)]
    threads = [threading.Thread(target=ask, args=agent) for agent in agents * 3]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []


def test_the_package_exports_its_api():
    assert set(jittybot_robots.__all__) >= {"RobotsTxt", "Decision", "Diagnostic", "product_token"}
    assert "RobotsTxt of" in repr(RobotsTxt(b""))
