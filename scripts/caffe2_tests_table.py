"""Write the "What runs" table of docs/caffe2-tests.md from a run of Caffe2's suites.

``tests/caffe2_suites/test_caffe2_suites.py`` appends one JSON line per Caffe2 test
file it runs to the file ``$CAFFE2RNN_SUITE_COUNTS`` names (its era, path, ``-k``
selection and the count of each outcome). This script turns those lines, with the
known outcomes of ``tests/caffe2_suites/caffe2_expectations.py``, into the page's
table, its totals and the list of tests that do not simply pass::

    CAFFE2RNN_SUITE_COUNTS=/tmp/counts.jsonl make test
    python scripts/caffe2_tests_table.py /tmp/counts.jsonl   # rewrites the page

Only the text between the page's ``<!-- suite-counts:start -->`` and
``<!-- suite-counts:end -->`` markers changes. A file of the table that the run
did not reach keeps no row: the script says which, and exits 1.
"""

import argparse
import collections
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "caffe2-tests.md")
sys.path.insert(0, os.path.join(ROOT, "tests", "caffe2_suites"))
from caffe2_expectations import ERA_COMMITS, SUITES  # noqa: E402

START, END = "<!-- suite-counts:start -->", "<!-- suite-counts:end -->"
OUTCOMES = ("passed", "skipped", "failed")


def read_counts(path):
    """``{suite id: Counter of outcomes}``; a later line for a suite replaces an earlier one."""
    counts = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                counts[record["id"]] = collections.Counter(record["counts"])
    return counts


def _file_cell(suite):
    cell = "`%s`" % suite.path
    return cell + (" (`-k %s`)" % suite.select if suite.select else "")


def _known(suite, test_id, outcome, reason):
    verb = {
        "failed": "fails",
        "flaky": "flaky",
        "skipped": 'skips itself (Caffe2\'s "%s")' % reason,
    }[outcome]
    text = "* %s `%s`, `%s`: %s" % (suite.era, suite.path, test_id, verb)
    return text if outcome == "skipped" else "%s — %s" % (text, reason)


def section(counts):
    """The generated Markdown, and the ids of the suites the run did not reach."""
    rows = ["| era | file | passed | skipped | failed |", "|---|---|---|---|---|"]
    totals = collections.defaultdict(collections.Counter)
    runs = collections.Counter()
    missing = []
    for suite in SUITES:
        if suite.id not in counts:
            missing.append(suite.id)
            continue
        count = counts[suite.id]
        rows.append(
            "| %s | %s | %s |"
            % (suite.era, _file_cell(suite), " | ".join(str(count[o]) for o in OUTCOMES))
        )
        totals[suite.era].update(count)
        runs[suite.era] += 1
    summary = "; ".join(
        "%s (%s), %d run%s: %s"
        % (
            era,
            ERA_COMMITS[era],
            runs[era],
            "" if runs[era] == 1 else "s",
            ", ".join("%d %s" % (totals[era][o], o) for o in OUTCOMES),
        )
        for era in sorted(runs)
    )
    known = [
        _known(suite, test_id, outcome, reason)
        for suite in SUITES
        for test_id, (outcome, reason) in sorted(suite.outcomes.items())
    ]
    text = "\n".join(
        rows
        + [
            "",
            "Totals: %s." % summary,
            "",
            "The tests that do not simply pass or skip for want of hardware:",
            "",
        ]
        + known
    )
    return text, missing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("counts", help="the JSON lines $CAFFE2RNN_SUITE_COUNTS collected")
    parser.add_argument("--page", default=PAGE)
    args = parser.parse_args(argv)
    text, missing = section(read_counts(args.counts))
    with open(args.page, encoding="utf-8") as handle:
        page = handle.read()
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    if not pattern.search(page):
        sys.exit("%s has no %s ... %s markers" % (args.page, START, END))
    page = pattern.sub(lambda _: "%s\n%s\n%s" % (START, text, END), page)
    with open(args.page, "w", encoding="utf-8") as handle:
        handle.write(page)
    print("wrote %s (%d suites)" % (args.page, len(SUITES) - len(missing)))
    if missing:
        print("not in the run, left out: %s" % ", ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
