"""Open fabricsim output files (HDF5) and read their tables and attributes.

Every reader here checks first that the path is a fabricsim output file
(it exists, is HDF5 and has a ``/meta`` group) and raises
:class:`FabricsimFileError` with a one-line message otherwise, so that the
command-line scripts can print ``error: ...`` instead of a traceback.

Tables (``/links``, ``/flows``, ``/collectives``, ...) are groups of 1-D
datasets of equal length (docs/output.md); :func:`read_table` returns them
as ``{column: numpy array}`` and :func:`read_structured` as one numpy
structured array.  String columns come back as ``str`` arrays.  A table
that breaks that schema -- columns of different lengths, a column the
scripts read that is not 1-D or not of its type (:data:`COLUMN_TYPES`: a
string where a number belongs, a fraction where an integer does), a column
a script needs that is missing -- raises :class:`FabricsimFileError` naming
the file and the dataset, so the scripts print one ``error:`` line.
"""

import contextlib
import os

import h5py
import numpy as np

DEFAULT_CLASS_NAMES = ["host", "fabric", "intra_server", "board", "global"]

# The columns Run reads (older files may lack some; extra ones are ignored).
META_KEYS = ("version", "git_sha", "build", "config", "ranks", "threads", "seed")
LINK_KEYS = (
    "src", "dst", "src_port", "dst_port", "class", "bandwidth_gbps",
    "latency_ns", "tx_bytes", "tx_packets", "busy_ns", "utilization",
    "max_queue_bytes", "stall_ns",
)
FLOW_KEYS = ("src", "dst", "bytes", "start_ns", "end_ns")
NODE_KEYS = ("kind", "name", "rank")


# The type of each column the scripts read (docs/output.md): "int" (integers), "num" (any
# number), "str" (text).  A column of another type, or not 1-D, is an error naming the file
# and the dataset; columns not listed here are read as they are.
_INT, _NUM, _STR = "int", "num", "str"
COLUMN_TYPES = {
    "collectives": {"job": _INT, "bytes": _INT, "iteration": _INT, "ranks": _INT, "finished": _INT,
                    "start_ns": _NUM, "end_ns": _NUM, "algbw_gbps": _NUM, "busbw_gbps": _NUM,
                    "op": _STR, "algorithm": _STR},
    "iterations": {"job": _INT, "iteration": _INT, "finished": _INT, "*_ns": _NUM},
    "jobs": {"model": _STR, "kind": _STR, "op": _STR, "algorithm": _STR, "schedule": _STR},
    "timeline": {"job": _INT, "endpoint": _INT, "iteration": _INT, "phase": _INT, "*_ns": _NUM},
    "links": {"src": _INT, "dst": _INT, "src_port": _INT, "dst_port": _INT, "class": _INT,
              "tx_bytes": _INT, "tx_packets": _INT, "max_queue_bytes": _INT, "bandwidth_gbps": _NUM,
              "utilization": _NUM, "*_ns": _NUM},
    "flows": {"src": _INT, "dst": _INT, "bytes": _INT, "*_ns": _NUM},
    "nodes": {"kind": _INT, "rank": _INT, "level": _INT, "name": _STR},
}
_KINDS = {_INT: "biu", _NUM: "biuf", _STR: "SUO"}
_WORDS = {_INT: "integers", _NUM: "numbers", _STR: "strings"}


class FabricsimFileError(Exception):
    """The path is missing, unreadable, or not a fabricsim run file (or one whose tables are broken)."""


# --------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------

def text(value):
    """A string attribute or string cell as ``str`` (HDF5 gives bytes or str)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.size == 1:
        return text(value.reshape(-1)[0])
    return str(value)


def py(value):
    """Convert an HDF5 attribute value to a plain Python value."""
    if isinstance(value, h5py.Empty):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        if value.shape == () or value.size == 1:
            return py(value.reshape(-1)[0]) if value.size else None
        return [py(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def read_array(ds):
    """Read a dataset to a numpy array; null/empty dataspaces give []; strings come back as str."""
    data = ds[()]
    if isinstance(data, h5py.Empty):
        return np.zeros(0, dtype=ds.dtype if ds.dtype.kind != "O" else object)
    data = np.asarray(data)
    if data.dtype.kind == "S" or (data.dtype.kind == "O" and data.size and isinstance(
            data.reshape(-1)[0], bytes)):
        data = np.array([text(v) for v in data.reshape(-1)], dtype=str).reshape(data.shape)
    return data


# --------------------------------------------------------------------------
# opening
# --------------------------------------------------------------------------

def check_path(path):
    """Raise FabricsimFileError unless ``path`` is an existing HDF5 file."""
    if not os.path.exists(path):
        raise FabricsimFileError("%s: no such file" % path)
    if os.path.isdir(path):
        raise FabricsimFileError("%s: is a directory, not a fabricsim file" % path)
    try:
        is_h5 = h5py.is_hdf5(path)
    except OSError as exc:
        raise FabricsimFileError("%s: cannot read file (%s)" % (path, exc))
    if not is_h5:
        raise FabricsimFileError("%s: not an HDF5 file (not a fabricsim run)" % path)


@contextlib.contextmanager
def open_file(path):
    """``with open_file(path) as f:`` an h5py.File of a fabricsim output file, read-only.

    Raises FabricsimFileError if the file is missing, not HDF5 or has no
    /meta group.
    """
    check_path(path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise FabricsimFileError("%s: cannot open HDF5 file (%s)" % (path, exc))
    with f:
        if "meta" not in f or not isinstance(f["meta"], h5py.Group):
            raise FabricsimFileError("%s: not a fabricsim file (no /meta group)" % path)
        yield f


def _file_path(f):
    return f.filename if isinstance(f, (h5py.File, h5py.Group)) else str(f)


@contextlib.contextmanager
def _opened(source):
    """An open h5py.File from a path (checked) or an already open file."""
    if isinstance(source, (h5py.File, h5py.Group)):
        yield source
    else:
        with open_file(source) as f:
            yield f


# --------------------------------------------------------------------------
# tables and attributes
# --------------------------------------------------------------------------

def has_table(source, name):
    """True if ``/name`` is a group (a table) in the file."""
    with _opened(source) as f:
        return name in f and isinstance(f[name], h5py.Group)


def column_type(table, column):
    """The type COLUMN_TYPES gives a column of a table ("int", "num", "str"), or None."""
    types = COLUMN_TYPES.get(table, {})
    if column in types:
        return types[column]
    if column.endswith("_ns") and "*_ns" in types:
        return types["*_ns"]
    return None


def _type_of(data):
    """What a column holds, in words: 'strings (|S1)', 'numbers (float64)'."""
    kind = data.dtype.kind
    if kind in "SU" or (kind == "O" and data.size and isinstance(data.reshape(-1)[0], (bytes, str))):
        return "strings"
    if kind == "f":
        return "fractional numbers (%s)" % data.dtype
    if kind in "biu":
        return "integers (%s)" % data.dtype
    return "values of type %s" % data.dtype


def check_column(path, table, column, data, want):
    """Raise FabricsimFileError unless ``data`` (a column read from /table/column) holds ``want``."""
    kind = data.dtype.kind
    if kind == "O" and data.size:
        first = data.reshape(-1)[0]
        kind = "U" if isinstance(first, (bytes, str)) else "O"
    if kind not in _KINDS[want]:
        raise FabricsimFileError("%s: /%s/%s: expected %s, found %s" % (
            path, table, column, _WORDS[want], _type_of(data)))


def read_table(source, name, columns=None, required=True, need=()):
    """``{column: numpy array}`` of the table ``/name`` (a path or an open file).

    ``columns``: the columns to read (those missing are left out); default
    all 1-D datasets of the group (sub-groups such as /links/timeseries and
    2-D datasets are skipped).  A missing table raises FabricsimFileError,
    or gives None with ``required=False``.  ``need``: columns that must be
    there.  The columns read must be of one length, and those of
    :data:`COLUMN_TYPES` 1-D and of their type; otherwise FabricsimFileError
    names the file and the dataset.
    """
    with _opened(source) as f:
        path = _file_path(f)
        if name not in f or not isinstance(f[name], h5py.Group):
            if not required:
                return None
            raise FabricsimFileError("%s: no /%s table" % (path, name))
        grp = f[name]
        keys = list(grp.keys()) if columns is None else list(columns)
        need_columns(path, name, grp, need)
        out = {}
        first = None
        for key in keys:
            if key not in grp:
                continue
            obj = grp[key]
            want = column_type(name, key)
            # (A column asked for or of COLUMN_TYPES must be one; anything else in the group is skipped.)
            listed = columns is not None or want is not None or key in need
            if not isinstance(obj, h5py.Dataset):
                if listed:
                    raise FabricsimFileError("%s: /%s/%s: expected a column (a dataset), found a group"
                                             % (path, name, key))
                continue
            if obj.shape is not None and len(obj.shape) != 1:  # (None: an empty dataspace, no rows)
                if listed:
                    raise FabricsimFileError("%s: /%s/%s: expected a column (1-D), found shape %s" % (
                        path, name, key, "()" if obj.shape == () else "x".join(str(n) for n in obj.shape)))
                continue
            try:
                data = read_array(obj)
            except (OSError, TypeError, ValueError) as exc:
                raise FabricsimFileError("%s: /%s/%s: cannot read it (%s)" % (path, name, key, exc))
            if want is not None:
                check_column(path, name, key, data, want)
            if first is None:
                first = (key, len(data))
            elif len(data) != first[1]:
                raise FabricsimFileError(
                    "%s: /%s/%s: %d rows, but /%s/%s has %d (the columns of a table have one length)" % (
                        path, name, key, len(data), name, first[0], first[1]))
            out[key] = data
        return out


def need_columns(path, name, table, keys):
    """Raise FabricsimFileError unless the columns ``keys`` are in ``table`` (read from /name of path)."""
    for key in keys:
        if key not in table:
            raise FabricsimFileError("%s: /%s/%s: missing (a column of the table /%s)" % (path, name, key, name))


def read_structured(source, name, columns=None, required=True):
    """The table ``/name`` as one numpy structured array (one record per row).

    String columns become unicode fields.  Columns of other lengths than
    the first are refused (ValueError), as the schema has none.
    """
    cols = read_table(source, name, columns, required)
    if cols is None:
        return None
    if not cols:
        return np.zeros(0, dtype=[])
    n = len(next(iter(cols.values())))
    for k, v in cols.items():
        if len(v) != n:
            raise ValueError("/%s: column %s has %d rows, %d expected" % (name, k, len(v), n))
    out = np.zeros(n, dtype=[(k, v.dtype) for k, v in cols.items()])
    for k, v in cols.items():
        out[k] = v
    return out


def read_attrs(source, name):
    """The attributes of ``/name`` (e.g. meta, summary, topology, engine) as plain Python values."""
    with _opened(source) as f:
        if name not in f:
            return {}
        return {k: py(v) for k, v in f[name].attrs.items()}


def read_params(source):
    """The resolved configuration of the run (``/meta`` config, TOML) as nested dicts.

    ``read_params(path)["workload"]["kind"]``; see also :func:`param`.
    Files without a config give {}.
    """
    import tomllib  # Python 3.11; only this reader needs it
    cfg = read_attrs(source, "meta").get("config")
    if cfg is None or cfg == "":
        return {}
    if not isinstance(cfg, str):
        raise FabricsimFileError("%s: /meta: attribute config: expected a string (TOML), found %r"
                                 % (_file_path(source), cfg))
    try:
        return tomllib.loads(cfg)
    except tomllib.TOMLDecodeError as exc:
        raise FabricsimFileError("%s: /meta config is not TOML (%s)" % (_file_path(source), exc))


def param(params, dotted, default=None):
    """``param(params, "network.link_gbps")``: one value of :func:`read_params`'s dict."""
    node = params
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def finished_mask(table):
    """Boolean mask of the rows that finished, for /collectives and /iterations.

    engine.end_ns can stop operations before they end: such rows have
    ``finished = 0`` (end_ns -1, NaN figures).  Files written before the
    column existed mark them by end_ns < 0 (or a far-future end).
    """
    if "finished" in table:
        return np.asarray(table["finished"]) != 0
    if "end_ns" in table:
        end = np.asarray(table["end_ns"], dtype=np.float64)
        return (end >= 0) & (end < 9e15)
    n = len(next(iter(table.values()))) if table else 0
    return np.ones(n, dtype=bool)


# --------------------------------------------------------------------------
# a whole run (what fabricsim_report.py reads)
# --------------------------------------------------------------------------

def parse_class_names(value):
    """'host,fabric,...' (str, bytes or array of str) -> list of names."""
    value = py(value)
    if value is None:
        return list(DEFAULT_CLASS_NAMES)
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    return [s.strip() for s in str(value).split(",")]


def _read_group(f, name, keys):
    """{key: array} for the listed datasets that exist, or None without the group."""
    if name not in f or not isinstance(f[name], h5py.Group):
        return None
    return read_table(f, name, keys)


class Run(object):
    """One fabricsim run file, fully read except for the time series."""

    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.summary = {}
        self.topology = {}       # /topology attributes (structure report), if present
        self.links = None        # {name: array} or None
        self.class_names = list(DEFAULT_CLASS_NAMES)
        self.nodes = None
        self.flows = None
        self.timeseries = {}     # {name: (shape, interval_ns)}; data read lazily

    @property
    def n_links(self):
        if not self.links:
            return 0
        return max((len(v) for v in self.links.values()), default=0)

    def __repr__(self):
        return "Run(%r, links=%d, flows=%d)" % (
            self.path, self.n_links,
            0 if not self.flows else len(self.flows.get("start_ns", [])))


def _timeseries(path, ds, key, n_links):
    """(shape, interval_ns) of /links/timeseries/KEY, checked: a 2-D dataset of integers, a row per link."""
    where = "%s: /links/timeseries/%s" % (path, key)
    if not isinstance(ds, h5py.Dataset):
        raise FabricsimFileError("%s: expected a dataset (links x intervals), found a group" % where)
    if ds.shape is None or len(ds.shape) != 2:
        raise FabricsimFileError("%s: expected a 2-D dataset (links x intervals), found shape %s" % (
            where, "()" if not ds.shape else "x".join(str(n) for n in ds.shape)))
    if ds.dtype.kind not in "biu":
        raise FabricsimFileError("%s: expected integers, found %s" % (
            where, "strings" if ds.dtype.kind in "SUO" else "values of type %s" % ds.dtype))
    if n_links is not None and ds.shape[0] != n_links:
        raise FabricsimFileError("%s: %d rows, but /links has %d links (a row per link)" % (
            where, ds.shape[0], n_links))
    interval = py(ds.attrs.get("interval_ns"))
    if interval is not None and not isinstance(interval, (int, float)):
        raise FabricsimFileError("%s: attribute interval_ns: expected a number, found %r" % (where, interval))
    return tuple(ds.shape), interval


def load_run(path):
    """Read a fabricsim HDF5 file into a :class:`Run`.

    Raises FabricsimFileError if the file is missing, not HDF5 or has no
    /meta group.
    """
    with open_file(path) as f:
        run = Run(path)
        run.meta = read_attrs(f, "meta")
        run.summary = read_attrs(f, "summary")
        run.topology = read_attrs(f, "topology")
        run.links = _read_group(f, "links", LINK_KEYS)
        if run.links is not None:
            if "class_names" in f["links"].attrs:
                run.class_names = parse_class_names(f["links"].attrs["class_names"])
            if not run.links:
                run.links = None
        if "links/timeseries" in f and isinstance(f["links/timeseries"], h5py.Group):
            ts = f["links/timeseries"]
            for key in ("tx_bytes", "queue_bytes"):
                if key in ts:
                    run.timeseries[key] = _timeseries(path, ts[key], key, run.n_links if run.links else None)
        run.nodes = _read_group(f, "nodes", NODE_KEYS) or None
        run.flows = _read_group(f, "flows", FLOW_KEYS) or None
        if run.nodes and "name" in run.nodes:
            run.nodes["name"] = np.array([py(n) for n in run.nodes["name"]], dtype=object)
    return run
