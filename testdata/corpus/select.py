#!/usr/bin/env python3
"""Chooses the sample corpus in testdata/corpus/robots/ from the full corpus.

    python3 testdata/corpus/select.py ../shared/corpus/robots testdata/corpus/robots

Deterministic: the same full corpus always gives the same sample. The choice is for coverage,
not the first N files:

1. one file over 500 KiB (the smallest such), so the size cut is met on a real file;
2. a few of the largest files of each size class under it;
3. for every rare feature the corpus README lists (`selected_for` = `feature:...`), a few
   files (all of them when there are only a few: UTF-16, non-UTF-8, Content-Signal...);
4. files found by content, for what `selected_for` does not name: wildcards, `$` anchors,
   many groups, long user-agent lists, odd user-agent values (`*name*`, versions, browser
   strings), sitemaps (several, relative, other schemes), NUL bytes, invalid UTF-8, CR-only
   line ends, crawl-delays that are not numbers, very long lines;
5. site and CMS project files (`named-repo`);
6. a stratified random sample of every size bucket (`sample...`), seed 20240601.

Files are added in that order while the sample, SOURCES.tsv included, stays under BUDGET
bytes. Writes the chosen files and their SOURCES.tsv rows (the full corpus's columns, plus
`sample_reason`).
"""

import os
import random
import re
import shutil
import sys

BUDGET = 2_900_000  # bytes, files and SOURCES.tsv together: under 3 MB with the README
SEED = 20240601
PER_FEATURE = 5
PER_CONTENT_TRAIT = 5
NAMED_REPO = 25
PER_SAMPLE_BUCKET = 30


def read_sources(directory):
    with open(os.path.join(directory, "SOURCES.tsv"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"))) for line in lines[1:] if line]
    return header, rows


def content_traits(body):
    """The traits of one file that `selected_for` does not record."""
    traits = set()
    text = body.decode("utf-8", errors="replace")
    lower = text.lower()
    lines = re.split(r"\r\n|\r|\n", lower)
    agents = [line.split(":", 1)[1].split("#")[0].strip()
              for line in lines if re.match(r"\s*user-?agent\s*:", line)]
    rules = [line.split(":", 1)[1].split("#")[0].strip()
             for line in lines if re.match(r"\s*(dis)?allow\s*:", line)]
    sitemaps = [line.split(":", 1)[1].strip()
                for line in lines if re.match(r"\s*sitemap\s*:", line)]
    if any("*" in rule for rule in rules):
        traits.add("wildcards")
    if sum(1 for line in lines if re.match(r"\s*user-?agent\s*:", line)) > 0:
        groups = sum(1 for i, line in enumerate(lines)
                     if re.match(r"\s*user-?agent\s*:", line)
                     and (i == 0 or not re.match(r"\s*user-?agent\s*:", lines[i - 1])))
        if groups > 40:
            traits.add("many-groups")
    if any(re.match(r"\*[a-z]", agent) for agent in agents):
        traits.add("ua-star-name")
    if any("/" in agent for agent in agents):
        traits.add("ua-version")
    if any("mozilla" in agent or "(" in agent for agent in agents):
        traits.add("ua-browser-string")
    if len(sitemaps) >= 5:
        traits.add("many-sitemaps")
    if any(not sitemap.startswith(("http://", "https://")) for sitemap in sitemaps):
        traits.add("sitemap-not-http-url")
    if b"\x00" in body:
        traits.add("nul-bytes")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        traits.add("invalid-utf8")
    if b"\r" in body and b"\n" not in body:
        traits.add("cr-only")
    if any(re.match(r"\s*crawl-delay\s*:\s*[^0-9\s.]", line) for line in lines):
        traits.add("crawl-delay-not-a-number")
    if any(len(line) > 2000 for line in lines):
        traits.add("long-line")
    if any(rule.startswith("http") for rule in rules):
        traits.add("url-rule")
    return traits


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, target = sys.argv[1], sys.argv[2]
    header, rows = read_sources(source)
    rng = random.Random(SEED)
    by_name = {row["file"]: row for row in rows}
    chosen = {}  # file -> reason, in order
    size = {"total": 0}

    def row_bytes(row, reason):
        return len("\t".join([row[column] for column in header] + [reason])) + 1

    def add(name, reason):
        if name in chosen:
            return
        row = by_name[name]
        cost = int(row["bytes"]) + row_bytes(row, reason)
        if size["total"] + cost > BUDGET:
            return
        chosen[name] = reason
        size["total"] += cost

    def pick(names, count, reason):
        names = sorted(names)
        rng.shuffle(names)
        for name in names[:count]:
            add(name, reason)

    size["total"] += len("\t".join(header + ["sample_reason"])) + 1
    # 1. One file over the 500 KiB cut: the smallest.
    huge = sorted((row for row in rows if int(row["bytes"]) > 512_000), key=lambda r: int(r["bytes"]))
    if huge:
        add(huge[0]["file"], "size:over-500KiB")
    # 2. Large files of each class.
    for bucket, count in (("size100-320K", 1), ("size50-100K", 2), ("size10-50K", 6)):
        pick([row["file"] for row in rows if row["selected_for"] == bucket], count, bucket)
    # 3. Rare features named by the corpus.
    features = sorted({row["selected_for"] for row in rows if row["selected_for"].startswith("feature:")})
    for feature in features:
        pick([row["file"] for row in rows if row["selected_for"] == feature], PER_FEATURE, feature)
    # 4. Traits found by content, among files of at most 64 KiB (the large ones are above).
    traits = {}
    for row in rows:
        if int(row["bytes"]) > 64 * 1024:
            continue
        with open(os.path.join(source, row["file"]), "rb") as handle:
            body = handle.read()
        for trait in content_traits(body):
            traits.setdefault(trait, []).append(row["file"])
    for trait in sorted(traits):
        pick(traits[trait], PER_CONTENT_TRAIT, "content:" + trait)
    # 5. Site and CMS projects.
    pick([row["file"] for row in rows if row["selected_for"] == "named-repo"], NAMED_REPO, "named-repo")
    # 6. The stratified random sample.
    buckets = sorted({row["selected_for"] for row in rows if row["selected_for"].startswith("sample")})
    for bucket in buckets:
        pick([row["file"] for row in rows if row["selected_for"] == bucket], PER_SAMPLE_BUCKET, bucket)

    os.makedirs(target, exist_ok=True)
    for name in os.listdir(target):
        os.remove(os.path.join(target, name))
    with open(os.path.join(target, "SOURCES.tsv"), "w", encoding="utf-8", newline="\n") as out:
        out.write("\t".join(header + ["sample_reason"]) + "\n")
        for name in sorted(chosen):
            row = by_name[name]
            out.write("\t".join([row[column] for column in header] + [chosen[name]]) + "\n")
            shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
    print(f"{len(chosen)} files, {size['total']} bytes with SOURCES.tsv", file=sys.stderr)


if __name__ == "__main__":
    main()
