"""JittyBot's robots.txt engine for Python: RFC 9309 parsing and matching, explained.

>>> from jittybot_robots import RobotsTxt
>>> robots = RobotsTxt(b"User-agent: *\\nDisallow: /private\\n")
>>> robots.allowed("https://example.com/private/a", "Scrapy/2.13 (+https://scrapy.org)")
False
>>> print(robots.explain("https://example.com/private/a", "Scrapy"))
line 2: Disallow: /private, group *

For Scrapy, set ``ROBOTSTXT_PARSER = "jittybot_robots.scrapy.RobotParser"``.
"""

from ._robots import (
    MAX_CACHED_AGENTS,
    MAX_ROBOTS_TXT_BYTES,
    PARSE_WITHOUT_GIL_BYTES,
    Decision,
    Diagnostic,
    RobotsTxt,
    product_token,
)

__all__ = [
    "MAX_CACHED_AGENTS",
    "MAX_ROBOTS_TXT_BYTES",
    "PARSE_WITHOUT_GIL_BYTES",
    "Decision",
    "Diagnostic",
    "RobotsTxt",
    "product_token",
]
