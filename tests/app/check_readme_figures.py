#!/usr/bin/env python3
"""Keeps the packet rates the README quotes in step with docs/performance.md.

Usage: check_readme_figures.py README.md docs/performance.md

1. docs/performance.md states the current rate in one heading that begins
   "### Now:" (e.g. "### Now: 5.9 M packet-hops per second (plain build),
   6.2 M (PGO build), ..."). Every figure of that heading must be quoted in a
   README sentence that mentions packet-hops: a new measurement there makes
   this check fail until the README says it too.
2. Every figure written "N M" or "N.N M" (millions) in such a README sentence
   must appear somewhere in docs/performance.md, exactly or as the rounding of
   a figure there to the README's precision (8.42 M there may be quoted as
   8.4 M). This catches a mistyped figure, not a stale one (performance.md
   keeps its history); rule 1 catches a stale headline.
Exit 0 when both hold, 1 otherwise, with one line per problem.
"""
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

# "5.9 M", "**5.95 M**", "6.2 M packet-hops/s"; not "82 MiB" or "16M".
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) M\b")
# A sentence ends at ".", "!" or "?" followed by white space and a capital,
# a backtick or a bracket; decimals ("5.9") never have white space after the point.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[])")


def readme_figures(text):
    """(figure, sentence) for each figure in a sentence that mentions packet-hops."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        flat = " ".join(paragraph.split())
        for sentence in SENTENCE_END.split(flat):
            if "packet-hop" in sentence:
                found += [(m.group(1), sentence) for m in FIGURE.finditer(sentence)]
    return found


def matches(figure, documented):
    quoted = Decimal(figure)
    places = Decimal(1).scaleb(quoted.as_tuple().exponent)  # 0.1 for "5.9", 1 for "5"
    return any(figure == d or Decimal(d).quantize(places, rounding=ROUND_HALF_UP) == quoted for d in documented)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        readme = f.read()
    with open(argv[2], encoding="utf-8") as f:
        performance = f.read()
    documented = set(FIGURE.findall(performance))
    now = [line for line in performance.splitlines() if line.startswith("### Now:")]
    current = FIGURE.findall(now[0]) if len(now) == 1 else []
    if not current:
        print(f"{argv[2]}: expected exactly one heading \"### Now: N.N M packet-hops ...\" with the current figures")
        return 1
    quoted = readme_figures(readme)
    quoted_set = {fig for fig, _ in quoted}
    problems = [f"{argv[1]}: the current figure {fig} M ({argv[2]}: \"{now[0]}\") is not quoted"
                for fig in current if fig not in quoted_set]
    problems += [f"{argv[1]}: {fig} M is not in {argv[2]}: \"{sentence}\""
                 for fig, sentence in quoted if not matches(fig, documented)]
    for line in problems:
        print(line)
    if not problems:
        print(f"{argv[1]}: quotes {', '.join(f + ' M' for f in current)} ({argv[2]}'s current figures); "
              f"{', '.join(sorted(quoted_set))} (M) all in {argv[2]}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
