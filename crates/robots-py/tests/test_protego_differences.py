"""Each kind of difference from Protego (Scrapy's default parser) the README lists, pinned.

One small file per cause, with the engine's answer (RFC 9309's reading) and Protego's, Protego
fed as Scrapy feeds it. If Protego changes its reading, the README's table must change too.
"""

import pytest

from jittybot_robots import MAX_ROBOTS_TXT_BYTES, RobotsTxt

protego = pytest.importorskip("protego")


def protego_allows(body, url, agent):
    return protego.Protego.parse(body.decode("utf-8-sig", errors="ignore")).can_fetch(url, agent)


BEYOND_LIMIT = b"User-agent: *\n" + b"#" * MAX_ROBOTS_TXT_BYTES + b"\nDisallow: /\n"

CASES = {
    # cause: (body, agent, URL, the engine allows it)
    "typo": (b"User-agent: *\nDissallow: /a\n", "Googlebot", "https://e.com/a", True),
    "typo_no_colon": (b"User-agent: *\nDisallow /a\n", "Googlebot", "https://e.com/a", True),
    "unknown_line_ends_agents": (
        b"User-agent: a\nNoindex: /x\nUser-agent: b\nDisallow: /\n",
        "a",
        "https://e.com/page",
        False,
    ),
    "limit": (BEYOND_LIMIT, "Googlebot", "https://e.com/", True),
    "starred_agent": (b"User-agent: *MJ12bot*\nDisallow: /\n", "MJ12bot", "https://e.com/", True),
    "global_with_punctuation": (b"User-agent: *;\nDisallow: /x\n", "Googlebot", "https://e.com/x", False),
    "agent_value_text": (b"User-agent: YandexBot/3.0\nDisallow: /x\n", "YandexBot", "https://e.com/x", False),
    "name_inside_name": (
        b"User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nAllow: /\n",
        "Googlebot-Image",
        "https://e.com/a.png",
        False,
    ),
    "index_html": (
        b"User-agent: *\nDisallow: /dir/\nAllow: /dir/index.html\n",
        "Googlebot",
        "https://e.com/dir/",
        False,
    ),
    "absolute_url_rule": (
        b"User-agent: *\nDisallow: https://e.com/x\n",
        "Googlebot",
        "https://e.com/https://e.com/x",
        True,
    ),
    "not_utf8": (b"User-agent: *\nDisallow: /caf\xe9\n", "Googlebot", "https://e.com/cafe", True),
    "python_line_breaks": (b"User-agent: *\nDisallow: /a\x0cDisallow: /b\n", "Googlebot", "https://e.com/b", True),
    "percent_encoding": (
        b"User-agent: *\nDisallow: /wiki/Special:\n",
        "Googlebot",
        "https://e.com/wiki/Special%3A",
        True,
    ),
}


@pytest.mark.parametrize("cause", sorted(CASES))
def test_the_engine_and_protego_differ_as_documented(cause):
    body, agent, url, engine_allows = CASES[cause]
    assert RobotsTxt(body).allowed(url, agent) is engine_allows
    assert protego_allows(body, url, agent) is (not engine_allows)


def test_a_crawler_that_wants_a_fallback_names_it():
    # Google's and Yandex's crawlers fall back to a shorter name; say so with a list.
    body, _agent, url, _allows = CASES["name_inside_name"]
    assert RobotsTxt(body).allowed(url, ["Googlebot-Image", "Googlebot"])


def test_where_protego_and_the_engine_agree():
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\n"
    for url, allowed in [
        ("https://e.com/private/a", False),
        ("https://e.com/private/open/a", True),
        ("https://e.com/a.pdf", False),
        ("https://e.com/a.pdf?x=1", True),
        ("https://e.com/robots.txt", True),
    ]:
        assert RobotsTxt(body).allowed(url, "Scrapy/2.13 (+https://scrapy.org)") is allowed
        assert protego_allows(body, url, "Scrapy/2.13 (+https://scrapy.org)") is allowed
