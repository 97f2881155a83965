"""Shared command-line pieces of the analysis scripts.

Every script takes fabricsim output files as positional arguments, and
some of ``--label NAME`` (one per file), ``--csv PATH`` (the printed table
as CSV) and ``--plot PATH`` (a PNG).  Errors in the input files end the
script with one ``error: ...`` line on stderr and exit status 1 (never a
traceback); bad arguments exit with status 2 (argparse).
"""

import argparse
import sys

from .io import FabricsimFileError


def parser(prog, doc):
    """An ArgumentParser whose description is the first line of ``doc``."""
    return argparse.ArgumentParser(prog=prog, description=(doc or "").strip().splitlines()[0])


def add_inputs(p, nargs="+", dest="runs", metavar="RUN.h5", help="fabricsim output files (HDF5)"):
    """The positional input files: ``args.runs`` (a list), or with nargs=None one path."""
    p.add_argument(dest, nargs=nargs, metavar=metavar, help=help)


def add_labels(p, help="name of a run in the output and plots (one per file, in order)"):
    p.add_argument("--label", action="append", default=[], metavar="NAME", help=help)


def add_csv(p, help="also write the table as CSV to PATH"):
    p.add_argument("--csv", metavar="PATH", help=help)


def add_plot(p, *flags, help="write a PNG plot to PATH"):
    """``--plot PATH``, or the given flags (the first names the attribute: '--png', '--plot')."""
    p.add_argument(*(flags or ("--plot",)), metavar="PATH", help=help)


def check_labels(labels, runs):
    """None, or the one-line complaint when --label is given but not once per file."""
    if labels and len(labels) != len(runs):
        return "give one --label per run file"
    return None


def one_line(exc):
    """The message of an exception on one line (KeyError's quotes kept, as Python prints them)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def run_main(body, args, stderr=None):
    """``body(args)`` with file errors turned into one ``error: ...`` line and status 1."""
    stderr = stderr or sys.stderr
    try:
        return body(args)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other tools do
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except FabricsimFileError as exc:
        print("error: %s" % exc, file=stderr)
    except (OSError, KeyError, ValueError, IndexError) as exc:
        print("error: %s" % one_line(exc), file=stderr)
    return 1
