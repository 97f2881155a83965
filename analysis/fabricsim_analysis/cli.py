"""Shared command-line pieces of the analysis scripts.

Every script takes fabricsim output files as positional arguments, and
some of ``--label NAME`` (one per file), ``--csv PATH`` (the printed table
as CSV) and ``--plot PATH`` (a PNG).  Errors in the input files end the
script with one ``error: ...`` line on stderr and exit status 1 (never a
traceback); bad arguments exit with status 2 (argparse), and so does an
output path that cannot be written (:func:`check_outputs`: one
``error: --csv: ...`` line, before any input is read).
"""

import argparse
import os
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


class UsageError(Exception):
    """A command-line value the script cannot use: one ``error: ...`` line, exit status 2."""


def output_problem(flag, path, directory=False):
    """None, or the one-line complaint about an output path given by ``flag``.

    A file to write must not be a directory (``directory``: a directory to
    make must not be a file), and the nearest existing directory above it
    must be one the user may write in.
    """
    if path is None:
        return None
    if path == "":
        return "%s: an empty path" % flag
    full = os.path.abspath(path)
    if directory and os.path.lexists(full) and not os.path.isdir(full):
        return "%s: %s exists and is not a directory" % (flag, path)
    if not directory and os.path.isdir(full):
        return "%s: %s is a directory (a file is written there)" % (flag, path)
    top = full if directory else os.path.dirname(full)
    while not os.path.lexists(top):
        top = os.path.dirname(top)
    if not os.path.isdir(top):
        return "%s: cannot create %s: %s is not a directory" % (flag, path, top)
    if not os.access(top, os.W_OK | os.X_OK):
        return "%s: cannot write %s: no permission to write in %s" % (flag, path, top)
    return None


def check_outputs(args, *specs):
    """Raise UsageError for the first unusable output path; ``specs``: (attribute, flag[, directory])."""
    for spec in specs:
        bad = output_problem(spec[1], getattr(args, spec[0], None), len(spec) > 2 and spec[2])
        if bad:
            raise UsageError(bad)


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
    except UsageError as exc:
        print("error: %s" % exc, file=stderr)
        return 2
    except FabricsimFileError as exc:
        print("error: %s" % exc, file=stderr)
    except (OSError, KeyError, ValueError, IndexError) as exc:
        print("error: %s" % one_line(exc), file=stderr)
    return 1
