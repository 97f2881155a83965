#!/usr/bin/python3
"""Seeded fuzz test of fabricsim's input contract (issue 19).

Generates random configurations, valid and invalid, by mutating small bases
(the ready inputs/*.toml, shrunk, and small scenarios of every topology and
workload kind) with values drawn from the parameter table (`fabricsim params`):
range boundaries and just outside them, 0, negatives, huge and tiny numbers,
NaN and infinities, wrong types, unknown keys, broken syntax, missing or
mutated model, trace (JSON and Chakra .et) and graph files, overrides on the command line.  Each is
run (`fabricsim run`, a timeout each) and must keep the contract:

  exit 0: no `error:` line, the output file written, conservation (bytes and
          packets injected = delivered, no packet dropped, every message
          delivered; unless engine.end_ns stopped the run), no temporary left;
  exit 2: exactly one `error:` line (other lines only `warning:`), no output
          file and no temporary left;
  never:  another exit status, a signal, a sanitizer report, `terminate
          called`, an assertion, or no answer within the timeout.

A case that scales the workload or topology far up (a size, count or
dimension many times its default) may take long or run out of memory
(`ulimit -v`, --memory-gib; the run's engine.memory_limit_gib is set to 3/4 of
it unless the case sets it): for those a timeout (after 5 s) or an
out-of-memory exit 1 is counted and reported, not failed.

Same seed, same cases: a failure is reproduced with the seed and --only N.
Failing cases are written to --save DIR (configuration and the files it uses)
to become corpus entries of tests/app/bad_inputs/ once fixed.

  fuzz_configs.py EXE SRC_DIR --seed S --count N [--timeout T] [--only N] [--save DIR] [-v]
"""
import argparse
import math
import os
import random
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile

import h5py

# ------------------------------------------------------------------ the parameter table


def parameter_table(exe):
    """{name: (type, default_text, lo, hi, lo_exclusive, choices)} from `fabricsim params`."""
    text = subprocess.run([exe, "params"], capture_output=True, text=True, check=True).stdout
    table, section = {}, None
    for line in text.splitlines():
        m = re.match(r"## \[(\w+)\]", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"\| `(\w+)` \| ([\w ]+) \| [^|]* \| `([^`]*)` \| ([^|]*) \|", line)
        if not m or section is None:
            continue
        key, typ, default, rng = m.groups()
        lo = hi = None
        lo_excl = False
        choices = []
        if typ == "choice":
            choices = re.findall(r"`([^`]+)`", rng)
        else:
            for op, num in re.findall(r"(>=|>|<=) (-?[\d.e+]+)", rng):
                if op == "<=":
                    hi = float(num)
                else:
                    lo, lo_excl = float(num), op == ">"
        table[f"{section}.{key}"] = (typ, default, lo, hi, lo_excl, choices)
    return table


# Parameters whose large values make a run big (more nodes, messages, bytes, iterations).
SCALE = re.compile(r"topology\.(endpoints|radix|down_ports|leaves|spines|links_per_pair|servers_per_leaf|"
                   r"gpus_per_server|gpus_per_nic|board_a|board_b|x|y|dims|a|p|h|groups|servers|degree|concentration)|"
                   r"workload\.(sizes|min_bytes|max_bytes|message_bytes|messages|iterations|warmup|ranks|"
                   r"data_parallel|pipeline_parallel|tensor_parallel|expert_parallel|micro_batches|minibatch|"
                   r"incast_sources|channels)|network\.(buffer_bytes|vcs|send_engines)|routing\.k_paths")


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(e) for e in v) + "]"
    return str(v)


def number_default(default):
    try:
        return float(default)
    except ValueError:
        return 1.0


def draw_value(rng, name, decl):
    """A value for parameter `name`: mostly in or at the edge of its range, some far off or of the wrong type."""
    typ, default, lo, hi, lo_excl, choices = decl
    r = rng.random()
    wrong = ["text", True, 1.5, [1], 7]
    if r < 0.06:
        return rng.choice(wrong)
    if typ == "boolean":
        return rng.choice([True, False, True, False, 1, "yes"])
    if typ == "choice":
        c = rng.choice(choices)
        return rng.choice([c, c, c, c + "x", c.upper(), 3])
    if typ == "string":
        return rng.choice(["missing_file.toml", "sub/dir/none.json", ".", "x.h5"])
    if r < 0.5 and lo is not None and typ in ("integer", "integer array", "number"):
        # Inside the range, often at an edge: what the loader accepts and the model must handle.
        top = hi if hi is not None else max(lo, 1) * 1e6
        if typ == "number":
            low = lo if not lo_excl else (lo + 1e-300 if lo == 0 else lo * (1 + 1e-12))
            v = rng.choice([low, top, low, top, 10 ** rng.uniform(math.log10(max(low, 1e-300)), math.log10(max(top, 1e-300))),
                            number_default(default) * rng.choice([1e-6, 1e-3, 1e3, 1e6])])
            return min(max(v, low), top)
        v = rng.choice([int(lo), int(top), int(lo) + 1, int(top) - 1,
                        int(round(10 ** rng.uniform(math.log10(max(lo, 1)), math.log10(max(top, 1)))))])
        v = min(max(v, int(lo)), int(top))
        if typ == "integer array":
            return [v] * rng.choice([1, 2, 3])
        return v
    if typ in ("integer", "integer array"):
        cands = [0, -1, 1, 2, 3, 4, 2**31, 2**32, 2**63 - 1, -(2**63)]
        if lo is not None:
            cands += [int(lo), int(lo) - 1, int(lo) + 1]
        if hi is not None:
            cands += [int(hi), int(hi) + 1, int(hi) - 1]
        d = int(number_default(default)) if default.lstrip("-").isdigit() else 1
        cands += [d, d * 2, d // 2, d + 1]
        if lo is not None:
            top = int(hi) if hi is not None else int(lo) + 64
            cands += [rng.randint(int(lo), min(top, int(lo) + 64))] * 4
        v = rng.choice(cands)
        if typ == "integer array":
            n = rng.choice([0, 1, 2, 2, 3])
            return [v] + [rng.choice(cands) for _ in range(n - 1)] if n else []
        return v
    # number
    d = number_default(default)
    cands = [0.0, -1.0, 1e-300, 1e-9, 1e300, float("nan"), float("inf"), -float("inf"), d, d * 2, d / 2, d * 1000,
             d / 1000]
    if lo is not None:
        cands += [lo, lo - 1e-9, lo + 1e-6, lo * 1.5 + 1]
    if hi is not None:
        cands += [hi, hi * 1.0000001 + 1, hi / 2]
    if lo is not None and hi is not None:
        cands += [rng.uniform(lo, hi)] * 3
    return rng.choice(cands)


def heavy_value(name, v, decl):
    """Whether `v` scales the run far beyond its default (so a timeout or OOM is not a bug)."""
    num = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v
    # Small packets multiply the packets of every message (65-byte packets: 1 payload byte each).
    if num and ((name == "network.packet_bytes" and v < 1024) or (name == "network.header_bytes" and v > 512)):
        return True
    if not SCALE.fullmatch(name):
        return False
    d = number_default(decl[1]) if decl else 1.0
    vals = v if isinstance(v, list) else [v]
    for x in vals:
        if isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and x > max(4 * max(d, 1), 64):
            return True
    return False


# ------------------------------------------------------------------ bases

TOY_GRAPH = """[[node]]
name = "s0"
kind = "switch"
[[node]]
name = "s1"
kind = "switch"
""" + "".join(f'[[node]]\nname = "e{i}"\nkind = "endpoint"\n' for i in range(4)) + """[[link]]
a = "s0"
b = "s1"
""" + "".join(f'[[link]]\na = "e{i}"\nb = "s{i % 2}"\n' for i in range(4))


def bases(src):
    """(name, toml text, extra files {name: text}); the text may name the extra files."""
    model = open(os.path.join(src, "tests/app/dnn_toy_model.toml")).read()
    trace = open(os.path.join(src, "tests/app/trace_toy.json")).read()
    ar = os.path.join(src, "tests/data/chakra/examples/workload/microbenchmarks/all_reduce/4npus_1MB/all_reduce")
    chakra = {f"t.{r}.et": open(f"{ar}.{r}.et", "rb").read() for r in range(4)}
    small = "[topology]\nendpoints = 16\nradix = 4\n"
    out = [
        ("default", "", {}),
        ("fat_tree_16", small + "[workload]\nmessage_bytes = 65536\nmessages = 2\n", {}),
        ("torus_4x4", '[topology]\nkind = "torus"\ndims = [4, 4]\n[network]\nvcs = 3\n'
                      '[workload]\nmessage_bytes = 65536\npattern = "alltoall"\nmessages = 3\n', {}),
        ("hammingmesh", '[topology]\nkind = "hammingmesh"\nboard_a = 2\nboard_b = 2\nx = 2\ny = 2\n[network]\nvcs = 3\n'
                        '[workload]\nmessage_bytes = 65536\n', {}),
        ("hyperx_routers", '[topology]\nkind = "hyperx"\nhyperx_model = "routers"\nx = 3\ny = 3\nconcentration = 2\n'
                           'radix = 8\n[network]\nvcs = 2\n[workload]\nmessage_bytes = 32768\n', {}),
        ("dragonfly", '[topology]\nkind = "dragonfly"\na = 2\np = 2\nh = 1\ngroups = 3\n[network]\nvcs = 3\n'
                      '[routing]\nalgorithm = "ugal_local"\n[workload]\nmessage_bytes = 32768\n', {}),
        ("topoopt", '[topology]\nkind = "topoopt"\nservers = 8\ndegree = 2\n[network]\nvcs = 4\n[routing]\n'
                    'algorithm = "minimal"\n[workload]\nmessage_bytes = 32768\n', {}),
        ("leaf_spine", '[topology]\nkind = "leaf_spine"\n[workload]\nmessage_bytes = 65536\npattern = "uniform"\n'
                       'messages = 2\n', {}),
        ("graph", '[topology]\nkind = "file"\nfile = "g.toml"\n[workload]\nmessage_bytes = 32768\n', {"g.toml": TOY_GRAPH}),
        ("collective", small + '[workload]\nkind = "collective"\nsizes = [4096, 65536]\nwarmup = 1\n', {}),
        ("collective_jobs", small + '[workload]\nkind = "collective"\nsizes = [8192]\n[[jobs]]\nranks = 8\n'
                            '[[jobs]]\nranks = 4\nop = "alltoall"\nstart_ns = 100\n', {}),
        ("dnn", small + '[workload]\nkind = "dnn"\nmodel = "m.toml"\ndata_parallel = 2\ntensor_parallel = 2\n'
                        'pipeline_parallel = 2\nmicro_batches = 2\n', {"m.toml": model}),
        ("trace", small + '[workload]\nkind = "trace"\ntrace = "t.json"\n', {"t.json": trace}),
        # A Chakra trace (binary files: mutated byte by byte, mutate_file).
        ("chakra", small + '[workload]\nkind = "trace"\ntrace = "t.0.et"\n', chakra),
    ]
    shrink = ("[workload]\nmessage_bytes = 16384\nmessages = 1\n", "[engine]\nend_ns = 0\n")
    for name in sorted(os.listdir(os.path.join(src, "inputs"))):
        if not name.endswith(".toml") or not re.search(r"small|_1k|128|default|allreduce", name):
            continue
        text = open(os.path.join(src, "inputs", name)).read()
        # Shrink the workload of the ready inputs so that each runs in about a second.
        text = re.sub(r"(?m)^(message_bytes|messages|sizes|min_bytes|max_bytes|iterations|warmup)\s*=.*$", "", text)
        if "[workload]" in text:
            text = text.replace("[workload]", "[workload]\nmessage_bytes = 16384\nmessages = 1\nsizes = [65536]", 1)
        else:
            text += shrink[0]
        out.append(("inputs/" + name, text, {}))
    return out


# ------------------------------------------------------------------ mutations


def set_key(text, name, value):
    """Sets section.key = value in a TOML text (replacing it in its section, else appending the section)."""
    section, key = name.split(".")
    line = f"{key} = {toml_value(value)}"
    pat = re.compile(rf"(?ms)^\[{section}\]\n(.*?)(?=^\[|\Z)")
    m = pat.search(text)
    if not m:
        return text.rstrip("\n") + f"\n[{section}]\n{line}\n"
    body = m.group(1)
    if re.search(rf"(?m)^{key}\s*=", body):
        body = re.sub(rf"(?m)^{key}\s*=.*$", lambda _: line, body, count=1)
    else:
        body = line + "\n" + body
    return text[:m.start(1)] + body + text[m.end(1):]


def mutate_bytes(rng, b):
    """Mutates a binary file (a Chakra .et): flipped, set or inserted bytes, a copied run, a cut."""
    b = bytearray(b)
    for _ in range(rng.choice([1, 1, 2, 4, 16])):
        if not b:
            break
        i, op = rng.randrange(len(b)), rng.randrange(6)
        if op == 0:
            b[i] = rng.randrange(256)
        elif op == 1:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 2:
            del b[i:]
        elif op == 3:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))
        elif op == 4:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randrange(1, 40)]
        else:
            b[i] = rng.choice([0x00, 0x7F, 0x80, 0xFF])
    return bytes(b)


def mutate_file(rng, text):
    """Mutates a numeric field of a model (TOML) or trace (JSON) file, or the bytes of a binary one."""
    if isinstance(text, bytes):
        return mutate_bytes(rng, text)
    nums = list(re.finditer(r"(?<=[=:] )-?\d[\d.e+]*", text))
    if not nums or rng.random() < 0.15:
        op = rng.random()
        if op < 0.4 and len(text) > 10:
            cut = rng.randrange(len(text))
            return text[:cut]  # truncated
        if op < 0.7:
            return text.replace("=", "= 1 +", 1) if "=" in text else text.replace(":", "::", 1)
        return text + ('\nbogus = 1\n' if "[" in text[:3] or "=" in text else "")
    m = rng.choice(nums)
    v = rng.choice(["0", "-1", "1e300", "-5", "4294967296", "9223372036854775807", "1099511627777", "0.5",
                    '"x"', "nan", "inf", "1e15", "1e12", "3", "1024", "1025"])
    if v in ("nan", "inf") and text.lstrip().startswith("{"):
        v = "1e999"  # JSON has no nan/inf literal; this overflows to infinity
    return text[:m.start()] + v + text[m.end():]


def make_case(rng, table, base):
    name, text, files = base
    files = dict(files)
    args, notes, heavy = [], [], False
    names = sorted(table)
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        r = rng.random()
        if r < 0.70:
            # Prefer the keys of the base's own sections (more of them matter).
            p = rng.choice(names)
            v = draw_value(rng, p, table[p])
            heavy |= heavy_value(p, v, table[p])
            if p == "engine.end_ns" or p.startswith("output.file"):
                pass
            if rng.random() < 0.2:
                args += ["--set", f"{p}={toml_value(v)}"]
                notes.append(f"--set {p}={toml_value(v)}")
            else:
                text = set_key(text, p, v)
                notes.append(f"{p} = {toml_value(v)}")
        elif r < 0.77 and files:
            f = rng.choice(sorted(files))
            files[f] = mutate_file(rng, files[f])
            notes.append(f"mutated {f}")
        elif r < 0.82:
            sec = rng.choice(["network", "workload", "topology", "engine"])
            text = set_key(text, f"{sec}.no_such_key", 1)
            notes.append("unknown key")
        elif r < 0.86 and text:
            cut = rng.randrange(len(text))
            text = text[:cut] + rng.choice(["[", "=", '"', "\x00", "]]", "\n[x\n", "= ="]) + text[cut:]
            notes.append("syntax")
        elif r < 0.90 and text:
            lines = text.splitlines()
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines) + "\n"
            notes.append("deleted a line")
        elif r < 0.94 and files:
            f = rng.choice(sorted(files))
            del files[f]
            notes.append(f"removed {f}")
        else:
            opt = rng.choice([["--bogus"], ["--set", "network.vcs"], ["--set", "=3"], ["--output"], ["extra.toml"],
                              ["--set", "workload.kind=dnn"]])
            args += opt
            notes.append("command line " + " ".join(opt))
    return text, files, args, notes, heavy


# ------------------------------------------------------------------ running and checking

BAD = ("terminate called", "Sanitizer", "runtime error:", "Assertion", "internal check failed", "internal error",
       "Segmentation", "core dumped")


def conservation(path):
    """Problems with the output file (empty list: fine)."""
    problems = []
    with h5py.File(path, "r") as f:
        s = f["summary"].attrs
        cfg = f["meta"].attrs["config"]
        cfg = cfg.decode() if isinstance(cfg, bytes) else cfg
        m = re.search(r"(?m)^end_ns = ([\d.e+-]+)", cfg)
        stopped = m is not None and float(m.group(1)) > 0
        inj, dlv = int(s["bytes_injected"]), int(s["bytes_delivered"])
        pinj, pdlv = int(s["packets_injected"]), int(s["packets_delivered"])
        if int(s["packets_dropped"]) != 0:
            problems.append(f"{s['packets_dropped']} packets dropped in a lossless network")
        if stopped:  # engine.end_ns may stop packets in flight
            if dlv > inj or pdlv > pinj:
                problems.append(f"more delivered than injected: {dlv} > {inj} bytes or {pdlv} > {pinj} packets")
        else:
            if inj != dlv:
                problems.append(f"bytes injected {inj} != delivered {dlv}")
            if pinj != pdlv:
                problems.append(f"packets injected {pinj} != delivered {pdlv}")
            if int(s["messages"]) != int(s["messages_delivered"]):
                problems.append(f"messages {s['messages']} != delivered {s['messages_delivered']}")
        if "flows" in f and not stopped and "bytes" in f["flows"]:
            if int(f["flows"]["bytes"][:].sum()) != dlv:
                problems.append("sum of /flows bytes != bytes delivered")
    return problems


NO_RLIMIT = False  # --no-rlimit


def run_case(exe, workdir, text, files, args, timeout, memory_gib):
    for f in os.listdir(workdir):
        p = os.path.join(workdir, f)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    if memory_gib > 0 and "memory_limit_gib" not in text and "memory_limit_gib" not in " ".join(args):
        # The machine the run sees: the address-space limit, less the program's own.
        text = set_key(text, "engine.memory_limit_gib", memory_gib * 0.75)
    with open(os.path.join(workdir, "c.toml"), "w") as f:
        f.write(text)
    for name, body in files.items():
        with open(os.path.join(workdir, name), "wb" if isinstance(body, bytes) else "w") as f:
            f.write(body)
    cmd = [exe, "run", "c.toml", *args]
    if "--output" not in args:
        cmd += ["--output", "out.h5"]

    def limit():
        if memory_gib > 0 and not NO_RLIMIT:
            lim = int(memory_gib * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    try:
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, errors="replace", timeout=timeout,
                           preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", None, "", []
    err = p.stderr
    problems = [f"'{b}' on stderr" for b in BAD if b in err]
    lines = err.splitlines()
    errors = [l for l in lines if l.startswith("error:")]
    debris = [f for f in os.listdir(workdir) if ".tmp-" in f or f.startswith("core")]
    if debris:
        problems.append(f"left behind: {debris}")
    out = os.path.join(workdir, "out.h5")
    rc = p.returncode
    if rc < 0:
        problems.append(f"killed by signal {-rc}")
    elif rc == 0:
        if errors:
            problems.append("exit 0 with an error: line")
        if "--output" not in args:
            if not os.path.exists(out):
                problems.append("exit 0 without the output file")
            else:
                try:
                    problems += conservation(out)
                except (OSError, KeyError) as e:
                    problems.append(f"unreadable output: {e}")
    elif rc == 2:
        if len(errors) != 1 or any(not (l.startswith("error:") or l.startswith("warning:")) for l in lines):
            problems.append(f"exit 2 with {len(errors)} error: lines among {len(lines)}")
        if os.path.exists(out):
            problems.append("exit 2 left an output file")
    elif rc == 1 and len(errors) == 1 and ("bad_alloc" in err or "memory" in err):
        return "oom", rc, err, problems
    else:
        problems.append(f"exit status {rc}")
    return ("fail" if problems else "ok"), rc, err, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exe")
    ap.add_argument("src", help="the source tree (inputs/, tests/app/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--memory-gib", type=float, default=4, help="address-space limit per run; 0: none")
    ap.add_argument("--no-rlimit", action="store_true",
                    help="no address-space limit (sanitizer builds reserve terabytes of it), only "
                         "engine.memory_limit_gib from --memory-gib")
    ap.add_argument("--only", type=int, default=-1, help="run only case N of the seed's sequence")
    ap.add_argument("--save", help="write failing cases to this directory")
    ap.add_argument("-v", action="store_true", help="print every case")
    a = ap.parse_args()
    global NO_RLIMIT
    NO_RLIMIT = a.no_rlimit
    exe = os.path.abspath(a.exe)
    table = parameter_table(exe)
    all_bases = bases(a.src)
    rng = random.Random(a.seed)
    tally = {"ok": 0, "fail": 0, "timeout": 0, "oom": 0}
    exits = {0: 0, 2: 0}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="fabricsim-fuzz-") as workdir:
        for i in range(a.count):
            base = rng.choice(all_bases)
            text, files, args, notes, heavy = make_case(rng, table, base)
            if a.only >= 0 and i != a.only:
                continue
            # A scaled-up case may take long legitimately: a short wait is enough to see it start.
            timeout = min(a.timeout, 5) if heavy else a.timeout
            status, rc, err, problems = run_case(exe, workdir, text, files, args, timeout, a.memory_gib)
            if status in ("timeout", "oom") and not heavy:
                problems = problems + [f"no answer within {timeout:g} s" if status == "timeout"
                                       else "out of memory at a default scale"]
                status = "fail"
            tally[status] += 1
            if rc in exits:
                exits[rc] += 1
            desc = f"case {i} ({base[0]}: {'; '.join(notes)}{' '.join([''] + [shlex.quote(x) for x in args])})"
            first = err.strip().splitlines()[0][:200] if err.strip() else ""
            if status == "fail":
                failed += 1
                print(f"FAIL {desc}: {'; '.join(problems)}: {first}")
                if a.save:
                    d = os.path.join(a.save, f"seed{a.seed}_case{i}")
                    os.makedirs(d, exist_ok=True)
                    with open(os.path.join(d, "c.toml"), "w") as f:
                        f.write(f"# args: {' '.join(shlex.quote(x) for x in args)}\n" + text)
                    for n, b in files.items():
                        with open(os.path.join(d, n), "wb" if isinstance(b, bytes) else "w") as f:
                            f.write(b)
            elif a.v or status != "ok":
                print(f"{status:<4} {desc}: exit {rc}: {first}")
    print(f"seed {a.seed}, {a.count} cases: {tally['ok']} kept the contract (exit 0: {exits[0]}, exit 2: "
          f"{exits[2]}), {tally['timeout']} scaled-up runs timed out, {tally['oom']} ran out of memory, "
          f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
