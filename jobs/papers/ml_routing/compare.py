#!/usr/bin/env python3
"""The flow-model grid against the packet-level subset (allreduce.csv and
allreduce_packet.csv from allreduce.py): per job mix and failed-spine count
that both ran, each scheme's All-Reduce time over the contention-free time
(mean over the mix's jobs) in both models, their ratio, and whether the two
rank the schemes the same way (ties: within 2%).

  jobs/papers/ml_routing/compare.py --out DIR   (reads DIR/allreduce.csv and DIR/allreduce_packet.csv)

Writes OUT/compare.csv and prints one line per mix.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlpaper as mp  # noqa: E402


def means(path):
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        mp.fail(path, "cannot read (%s; run allreduce.py and allreduce.py --packet with the same --out first)"
                % (e.strerror or e), 1)
    out = {}
    for r in rows:
        try:
            key = (int(r["ring"]), int(r["jobs"]), int(r["failed_spines"]), r["scheme"])
            out.setdefault(key, []).append(float(r["ratio_to_ideal"]))
        except (KeyError, ValueError) as e:
            mp.fail(path, "not an allreduce.py CSV (%s)" % e, 1)
    return {k: sum(v) / len(v) for k, v in out.items()}


def ranking(values, tie=0.02):
    """Schemes in order, those within `tie` of each other in one group."""
    order = sorted(values, key=lambda s: values[s])
    groups = []
    for s in order:
        if groups and values[s] <= values[groups[-1][0]] * (1 + tie):
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def agree(a, b):
    """No pair of schemes ordered one way in a and strictly the other way in b."""
    pos = lambda groups: {s: i for i, g in enumerate(groups) for s in g}
    pa, pb = pos(a), pos(b)
    common = [s for s in pa if s in pb]
    return all(not ((pa[x] < pa[y] and pb[x] > pb[y]) or (pa[x] > pa[y] and pb[x] < pb[y]))
               for x in common for y in common)


def main():
    p = mp.Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="papers-ml-routing", help="the directory of both CSVs; compare.csv goes there")
    args = p.parse_args()
    flow = means(os.path.join(args.out, "allreduce.csv"))
    packet = means(os.path.join(args.out, "allreduce_packet.csv"))
    mixes = sorted({k[:3] for k in packet} & {k[:3] for k in flow})
    if not mixes:
        mp.fail("--out", "the two CSVs share no job mix and failure count", 1)
    rows = []
    for m in mixes:
        schemes = [s for s in mp.SCHEMES if m + (s,) in flow and m + (s,) in packet]
        fv = {s: flow[m + (s,)] for s in schemes}
        pv = {s: packet[m + (s,)] for s in schemes}
        fr, pr = ranking(fv), ranking(pv)
        same = agree(fr, pr)
        for s in schemes:
            rows.append({"ring": m[0], "jobs": m[1], "failed_spines": m[2], "scheme": s, "flow_ratio": fv[s],
                         "packet_ratio": pv[s], "packet_over_flow": pv[s] / fv[s], "ranking_agrees": int(same)})
        print("ring %d, %d job%s, %d down: flow %s | packet %s | %s" % (
            m[0], m[1], "" if m[1] == 1 else "s", m[2],
            " < ".join("=".join(g) for g in fr), " < ".join("=".join(g) for g in pr),
            "same ranking" if same else "RANKINGS DIFFER"))
    path = os.path.join(args.out, "compare.csv")
    mp.write_csv(path, rows)
    print("wrote %s" % path)


if __name__ == "__main__":
    mp.main(main)
