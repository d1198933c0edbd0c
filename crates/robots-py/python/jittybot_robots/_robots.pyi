"""Type stubs of the extension module (see the package README for the full API)."""

from typing import Final, List, Literal, Optional, Sequence, Union

UserAgent = Union[str, Sequence[str]]
"""A product token, a crawler's name or a whole User-Agent string; or several, most preferred
first."""

MAX_ROBOTS_TXT_BYTES: Final[int]
"""The most bytes of a file that are read (512,000); the rest is ignored."""

PARSE_WITHOUT_GIL_BYTES: Final[int]
"""Bodies of at least this many bytes are parsed with the GIL released."""

MAX_CACHED_AGENTS: Final[int]
"""How many user agents' rules one RobotsTxt keeps."""

def product_token(user_agent: str) -> Optional[str]:
    """The product token a crawler's name or User-Agent string names, or None."""

class RobotsTxt:
    """A robots.txt file, read as JittyBot's engine reads it (RFC 9309)."""

    def __init__(self, body: Union[bytes, str]) -> None:
        """Reads the file as served: bytes, or str (encoded as UTF-8)."""
    def allowed(self, url: str, user_agent: UserAgent) -> bool:
        """Whether user_agent may fetch url. ValueError for a URL without a host."""
    def explain(self, url: str, user_agent: UserAgent) -> Decision:
        """The decision with its deciding line, rule and group."""
    def crawl_delay(self, user_agent: UserAgent) -> Optional[float]:
        """The crawl-delay in seconds of the group user_agent follows, or None."""
    def group(self, user_agent: UserAgent) -> Optional[str]:
        """The group user_agent follows: its product token, "*", or None."""
    @property
    def sitemaps(self) -> List[str]:
        """The sitemap URLs the file lists, in file order."""
    @property
    def diagnostics(self) -> List[Diagnostic]:
        """What the parser ignored, repaired or found suspicious, in line order."""
    @property
    def bytes_read(self) -> int:
        """How many bytes of the body are read (at most MAX_ROBOTS_TXT_BYTES)."""

class Decision:
    """Whether a URL may be fetched, and why."""

    @property
    def allowed(self) -> bool: ...
    @property
    def line(self) -> Optional[int]:
        """The deciding rule's line number, or None when no rule matched."""
    @property
    def text(self) -> Optional[str]:
        """The deciding line as written in the file."""
    @property
    def kind(self) -> Optional[Literal["allow", "disallow"]]: ...
    @property
    def pattern(self) -> Optional[str]:
        """The deciding rule's path pattern as written."""
    @property
    def rule(self) -> Optional[str]:
        """The deciding rule as "Disallow: /search"."""
    @property
    def group(self) -> Optional[str]:
        """The group followed: its product token, "*", or None when none applies."""
    @property
    def tokens(self) -> List[str]:
        """The product tokens the user agent was read as, most preferred first."""
    @property
    def robots_txt_exemption(self) -> bool:
        """Whether the URL is /robots.txt itself, which is always allowed."""
    @property
    def reason(self) -> str:
        """The reason in words, as str() gives it."""

class Diagnostic:
    """Something the parser ignored, repaired or found suspicious, on one line."""

    @property
    def line(self) -> int: ...
    @property
    def kind(self) -> str:
        """A stable snake_case name: "unknown_field", "empty_rule", ..."""
    @property
    def message(self) -> str: ...
    @property
    def text(self) -> str:
        """The line as written (cut to 200 characters)."""
