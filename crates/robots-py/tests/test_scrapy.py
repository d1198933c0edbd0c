"""A real Scrapy crawl of a test site on loopback, with this package's robots.txt parser.

The site logs every request it receives; the assertions are on that log: what Scrapy fetched,
what it never asked for, and how often it asked for robots.txt.
"""

import http.server
import re
import subprocess
import sys
import textwrap
import threading
import time

import scrapy  # noqa: F401 - the test needs Scrapy installed, and says so by failing here

from jittybot_robots.scrapy import RobotParser

# The spider's User-Agent header is a whole browser-style string; the parser must find its
# product token in it, or the `*` group (everything disallowed) would stop the crawl.
USER_AGENT = "Mozilla/5.0 (compatible; JittyTestSpider/1.0; +http://jittybot.test/bot)"

ROBOTS_TXT = b"""\
User-agent: *
Disallow: /

User-agent: JittyTestSpider
Disallow: /private/
Allow: /private/open.html
Disallow: /*.pdf$
Dissallow: /typo/
"""

# Each page and the links on it.
PAGES = {
    "/": [
        "/public/a.html",
        "/public/b.html",
        "/private/secret.html",
        "/private/open.html",
        "/files/report.pdf",
        "/files/report.pdf?download=1",
        "/typo/page.html",
    ],
    "/public/a.html": ["/private/deeper/x.html", "/public/c.html"],
    "/public/b.html": ["/public/a.html"],
    "/public/c.html": [],
    "/private/open.html": ["/private/secret.html"],
    "/private/secret.html": [],
    "/private/deeper/x.html": [],
    "/files/report.pdf": [],
    "/files/report.pdf?download=1": [],
    "/typo/page.html": [],
}

SPIDER = '''
import scrapy
from scrapy.http import TextResponse


class Site(scrapy.Spider):
    name = "site"

    def __init__(self, start, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]

    def parse(self, response):
        if not isinstance(response, TextResponse):
            return
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)
'''


class Site(http.server.ThreadingHTTPServer):
    """The test site: serves PAGES and robots.txt, logs every request."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.log = []
        self.lock = threading.Lock()

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.server_address[1]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the name http.server calls
        if self.path == "/robots.txt":
            status, kind, body = 200, "text/plain", ROBOTS_TXT
        elif self.path in PAGES:
            links = "".join('<a href="%s">%s</a>\n' % (link, link) for link in PAGES[self.path])
            kind = "application/pdf" if ".pdf" in self.path else "text/html"
            status, body = 200, ("<html><body>%s</body></html>" % links).encode()
        else:
            status, kind, body = 404, "text/plain", b"not found"
        with self.server.lock:
            self.server.log.append(
                {
                    "time": time.time(),
                    "client": self.client_address[0],
                    "method": self.command,
                    "path": self.path,
                    "user_agent": self.headers.get("User-Agent"),
                    "status": status,
                }
            )
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass  # the log above is the record


def crawl(tmp_path, site, *settings):
    spider = tmp_path / "site_spider.py"
    spider.write_text(textwrap.dedent(SPIDER))
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-a", "start=%s/" % site.base]
    for setting in (
        "ROBOTSTXT_OBEY=True",
        "ROBOTSTXT_PARSER=jittybot_robots.scrapy.RobotParser",
        "USER_AGENT=%s" % USER_AGENT,
        "TELNETCONSOLE_ENABLED=False",
        "LOG_LEVEL=INFO",
        "CLOSESPIDER_TIMEOUT=60",
    ) + settings:
        command += ["-s", setting]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)


def test_a_scrapy_crawl_fetches_what_robots_txt_allows_and_nothing_else(tmp_path):
    site = Site()
    server = threading.Thread(target=site.serve_forever)
    server.start()
    try:
        result = crawl(tmp_path, site)
    finally:
        site.shutdown()
        server.join()
        site.server_close()
    assert result.returncode == 0, result.stderr[-3000:]

    requested = [entry["path"] for entry in site.log]
    assert requested.count("/robots.txt") == 1, requested
    assert all(entry["client"] == "127.0.0.1" for entry in site.log)
    assert all(entry["user_agent"] == USER_AGENT for entry in site.log)
    # Robots.txt came first; every page was asked for once.
    assert requested[0] == "/robots.txt", requested
    assert sorted(set(requested)) == sorted(requested), requested

    allowed = {
        "/",
        "/public/a.html",
        "/public/b.html",
        "/public/c.html",
        "/private/open.html",  # Allow: /private/open.html is more specific than /private/
        "/files/report.pdf?download=1",  # /*.pdf$ ends at the end of path and query
        "/typo/page.html",  # "Dissallow" is no field (RFC 9309); Protego would obey it
    }
    never = {"/private/secret.html", "/private/deeper/x.html", "/files/report.pdf"}
    assert set(requested) == allowed | {"/robots.txt"}, requested
    assert not never & set(requested)
    # Scrapy counted each request it dropped (the second link to secret.html, from
    # open.html, was already seen by its duplicate filter).
    forbidden = re.search(r"'robotstxt/forbidden': (\d+)", result.stderr)
    assert forbidden and int(forbidden.group(1)) == 3, result.stderr[-3000:]


def test_the_parser_answers_as_scrapy_calls_it():
    # Scrapy builds one with an empty body when the middleware starts, and asks with the
    # User-Agent header as bytes.
    empty = RobotParser.from_crawler(None, b"")
    assert empty.allowed("https://example.com/", b"Scrapy/2.13 (+https://scrapy.org)")
    parser = RobotParser.from_crawler(None, ROBOTS_TXT)
    assert parser.allowed("http://127.0.0.1/public/a.html", USER_AGENT.encode())
    assert not parser.allowed(b"http://127.0.0.1/private/secret.html", USER_AGENT)
    assert not parser.allowed("http://127.0.0.1/public/a.html", b"Scrapy/2.13 (+https://scrapy.org)")
    assert not parser.allowed("mailto:someone@example.com", USER_AGENT)
    assert parser.crawl_delay(USER_AGENT) is None
    delayed = RobotParser(b"User-agent: *\nCrawl-delay: 4\n")
    assert delayed.crawl_delay(b"Scrapy") == 4.0
