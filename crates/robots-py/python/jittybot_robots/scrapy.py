"""Scrapy's robots.txt parser setting, backed by JittyBot's engine.

In the project's settings::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "jittybot_robots.scrapy.RobotParser"

Scrapy hands the parser the robots.txt body as bytes and asks with each request's
User-Agent header (or ``ROBOTSTXT_USER_AGENT``): the engine reads the product token out of
it, so ``"MyBot/1.0 (+https://example.com/bot)"`` follows the groups of ``MyBot``.
"""

from __future__ import annotations

from typing import Any, Optional, Union

from scrapy.robotstxt import RobotParser as _RobotParser

from ._robots import RobotsTxt

__all__ = ["RobotParser"]


def _text(value: Union[str, bytes]) -> str:
    # Header values come as bytes; a byte that is not UTF-8 cannot be part of a product token.
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class RobotParser(_RobotParser):
    """A ``scrapy.robotstxt.RobotParser`` that reads robots.txt as RFC 9309 says."""

    def __init__(self, robotstxt_body: bytes, spider: Optional[Any] = None) -> None:
        self.spider = spider
        # The body as served: the engine reads its bytes itself (byte order mark, invalid
        # UTF-8 line by line, the first 500 KiB), so nothing is decoded or thrown away here.
        self.robots = RobotsTxt(robotstxt_body)
        # The last User-Agent header seen and its text: Scrapy sends the same header with
        # every request, as a new bytes object each time, and the engine recognises a string
        # it has seen before without reading it again.
        self._agent: Union[str, bytes, None] = None
        self._agent_text = ""

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> "RobotParser":
        return cls(robotstxt_body, getattr(crawler, "spider", None))

    def _user_agent(self, user_agent: Union[str, bytes]) -> str:
        if user_agent != self._agent:
            self._agent = user_agent
            self._agent_text = _text(user_agent)
        return self._agent_text

    def allowed(self, url: Union[str, bytes], user_agent: Union[str, bytes]) -> bool:
        try:
            return self.robots.allowed(_text(url), self._user_agent(user_agent))
        except ValueError:
            # A URL without a host (mailto:, data:) is governed by no robots.txt: not crawled.
            return False

    def crawl_delay(self, user_agent: Union[str, bytes]) -> Optional[float]:
        return self.robots.crawl_delay(self._user_agent(user_agent))
