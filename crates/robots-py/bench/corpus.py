"""The corpus both scripts read, and the URLs they ask about each file.

The URLs are made from each file's own text, not from any parser's reading of it, so every
parser is asked the same questions: eight common paths, then one URL per path-like value of
the file (every line whose value starts with ``/`` or ``*``, misspelled fields included, with
``*`` filled in and a final ``$`` dropped, and the directory of an ``.../index.html`` path),
then filler paths, 64 in all.
"""

import os
import re

URLS_PER_FILE = 64

COMMON_PATHS = [
    "/",
    "/index.html",
    "/search?q=robots&page=2",
    "/a/b/c.pdf",
    "/admin/",
    "/wp-admin/admin-ajax.php",
    "/cgi-bin/test.cgi",
    "/private/?x=1",
]

_LINE_END = re.compile(rb"\r\n|\r|\n")
_FIELD_VALUE = re.compile(rb"^\s*[A-Za-z][A-Za-z -]*?\s*(?::\s*|\s+)([/*]\S*)")


# What a corpus directory holds besides robots.txt files (as the workspace's corpus reader).
NOT_ROBOTS_TXT = {"SOURCES.tsv", "README.md"}


def load(directory):
    """Every robots.txt file of `directory` as (name, bytes), in name order."""
    files = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.isfile(path) and name not in NOT_ROBOTS_TXT:
            with open(path, "rb") as handle:
                files.append((name, handle.read()))
    if not files:
        raise SystemExit("no files in %s: give the directory of robots.txt files" % directory)
    return files


def urls(body):
    """The URLs asked about `body`."""
    found = ["https://example.com" + path for path in COMMON_PATHS]
    for line in _LINE_END.split(body):
        match = _FIELD_VALUE.match(line.split(b"#", 1)[0])
        if not match:
            continue
        value = match.group(1).decode("utf-8", "replace").replace("*", "x")
        if value.endswith("$"):
            value = value[:-1]
        found.append("https://example.com/" + value.lstrip("/"))
        if value.endswith("/index.html"):
            found.append("https://example.com/" + value.lstrip("/")[: -len("index.html")])
        if len(found) >= URLS_PER_FILE:
            break
    while len(found) < URLS_PER_FILE:
        found.append("https://example.com/page/%d/more" % len(found))
    return found[:URLS_PER_FILE]
