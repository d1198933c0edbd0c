"""jittybot_robots against the Python robots.txt parsers, on a corpus, from one process.

    python bench/speed.py CORPUS_DIR [--rounds 5] [--agent Googlebot] [--engines a,b]

Three workloads, each over every file of the corpus, in interleaved rounds (each round runs
every parser once per workload, in an order rotated from round to round), reported as the
median and the best round:

- parse: make each parser's object from the file as Scrapy hands it over (bytes; the peers
  get it decoded as Scrapy decodes it for them). jittybot_robots parses lazily, per crawler,
  so its parse is `RobotsTxt(body).crawl_delay(agent)`, which runs the one-crawler parse.
- parse+check: a fresh object per file, then 64 URLs (bench/corpus.py) for one agent: what a
  crawler pays for a site it meets, and Scrapy's use.
- check: the same URLs on objects made and asked once before the clock starts (each parser's
  lazy work done), per URL.

Parsers that are not installed are left out and named. reppy 0.4.14 (2019) no longer builds
with current compilers as published; `pip install wheel setuptools cython` then
`CPPFLAGS="-include limits -include cstdint" pip install --no-build-isolation reppy` builds it.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def scrapy_text(body):
    """How Scrapy decodes a body for Protego and robotexclusionrulesparser."""
    return body.decode("utf-8-sig", errors="ignore")


def engines():
    """name -> (prepare(body), check(obj, url, agent), warm(obj, agent)); and the missing."""
    found = {}
    missing = []

    from jittybot_robots import RobotsTxt

    found["jittybot_robots"] = (
        RobotsTxt,
        lambda robots, url, agent: robots.allowed(url, agent),
        lambda robots, agent: robots.crawl_delay(agent),
    )
    try:
        from protego import Protego
    except ImportError:
        missing.append("protego")
    else:
        found["protego"] = (
            lambda body: Protego.parse(scrapy_text(body)),
            lambda parser, url, agent: parser.can_fetch(url, agent),
            None,
        )
    from urllib.robotparser import RobotFileParser

    def urllib_parse(body):
        parser = RobotFileParser()
        parser.parse(scrapy_text(body).splitlines())
        return parser

    found["urllib.robotparser"] = (
        urllib_parse,
        lambda parser, url, agent: parser.can_fetch(agent, url),
        None,
    )
    try:
        from robotexclusionrulesparser import RobotExclusionRulesParser
    except ImportError:
        missing.append("robotexclusionrulesparser")
    else:

        def rerp_parse(body):
            parser = RobotExclusionRulesParser()
            parser.parse(scrapy_text(body))
            return parser

        found["robotexclusionrulesparser"] = (
            rerp_parse,
            lambda parser, url, agent: parser.is_allowed(agent, url),
            None,
        )
    try:
        from reppy.robots import Robots
    except ImportError:
        missing.append("reppy")
    else:
        found["reppy"] = (
            lambda body: Robots.parse("https://example.com/robots.txt", scrapy_text(body)),
            lambda robots, url, agent: robots.allowed(url, agent),
            None,
        )
    return found, missing


def run_parse(engine, files, agent):
    prepare, _check, warm = engine
    errors = 0
    start = time.perf_counter()
    for _name, body, _urls in files:
        try:
            made = prepare(body)
            if warm is not None:
                warm(made, agent)
        except Exception:  # noqa: BLE001 - a peer failing on a file is counted, not fatal
            errors += 1
    return time.perf_counter() - start, errors


def run_parse_check(engine, files, agent):
    prepare, check, _warm = engine
    errors = 0
    start = time.perf_counter()
    for _name, body, urls in files:
        try:
            made = prepare(body)
            for url in urls:
                check(made, url, agent)
        except Exception:  # noqa: BLE001
            errors += 1
    return time.perf_counter() - start, errors


def run_check(engine, files, agent):
    prepare, check, _warm = engine
    made = []
    errors = 0
    for _name, body, urls in files:
        try:
            parsed = prepare(body)
            check(parsed, urls[0], agent)
            made.append((parsed, urls))
        except Exception:  # noqa: BLE001
            errors += 1
    start = time.perf_counter()
    for parsed, urls in made:
        try:
            for url in urls:
                check(parsed, url, agent)
        except Exception:  # noqa: BLE001
            errors += 1
    return time.perf_counter() - start, errors


WORKLOADS = {"parse": run_parse, "parse+check": run_parse_check, "check": run_check}


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("corpus", help="a directory of robots.txt files")
    arguments.add_argument("--rounds", type=int, default=5)
    arguments.add_argument("--agent", default="Googlebot")
    arguments.add_argument("--engines", help="comma-separated names, default: all installed")
    args = arguments.parse_args()

    found, missing = engines()
    if args.engines:
        found = {name: found[name] for name in args.engines.split(",")}
    files = [(name, body, corpus.urls(body)) for name, body in corpus.load(args.corpus)]
    size = sum(len(body) for _name, body, _urls in files)
    url_count = sum(len(urls) for _name, _body, urls in files)
    print("corpus: %d files, %.1f MB, %d URLs; agent %r; %d rounds; load %s" % (
        len(files), size / 1e6, url_count, args.agent, args.rounds,
        " ".join("%.1f" % x for x in os.getloadavg())))
    if missing:
        print("not installed: %s" % ", ".join(missing))

    names = list(found)
    times = {(workload, name): [] for workload in WORKLOADS for name in names}
    errors = {}
    for round_number in range(args.rounds):
        order = names[round_number % len(names):] + names[: round_number % len(names)]
        for workload, run in WORKLOADS.items():
            for name in order:
                seconds, failed = run(found[name], files, args.agent)
                times[(workload, name)].append(seconds)
                errors[name] = max(errors.get(name, 0), failed)
        print("round %d done, load %.1f" % (round_number + 1, os.getloadavg()[0]), file=sys.stderr)

    def median(workload, name):
        return statistics.median(times[(workload, name)])

    def best(workload, name):
        return min(times[(workload, name)])

    print("load at the end: %s" % " ".join("%.1f" % x for x in os.getloadavg()))
    print()
    print("| parser | parse, MB/s | parse, µs/file | parse+check, µs/file | check, ns/URL | parse+check vs Protego |")
    print("|---|---|---|---|---|---|")
    base = median("parse+check", "protego") if "protego" in names else None
    for name in names:
        parse = median("parse", name)
        parse_check = median("parse+check", name)
        check = median("check", name)
        ratio = "%.1f×" % (base / parse_check) if base else "–"
        print("| %s | %.1f (%.1f) | %.1f | %.1f (%.1f) | %.0f (%.0f) | %s |" % (
            name,
            size / parse / 1e6, size / best("parse", name) / 1e6,
            parse / len(files) * 1e6,
            parse_check / len(files) * 1e6, best("parse+check", name) / len(files) * 1e6,
            check / url_count * 1e9, best("check", name) / url_count * 1e9,
            ratio))
    print()
    print("Medians of %d rounds (best round in brackets)." % args.rounds)
    failing = {name: count for name, count in errors.items() if count}
    if failing:
        print("Files a parser raised an exception on (the rest of such a file is skipped): %s" % (
            ", ".join("%s %d" % item for item in failing.items())))


if __name__ == "__main__":
    main()
