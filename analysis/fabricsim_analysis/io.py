"""Open fabricsim output files (HDF5) and read their tables and attributes.

Every reader here checks first that the path is a fabricsim output file
(it exists, is HDF5 and has a ``/meta`` group) and raises
:class:`FabricsimFileError` with a one-line message otherwise, so that the
command-line scripts can print ``error: ...`` instead of a traceback.

Tables (``/links``, ``/flows``, ``/collectives``, ...) are groups of 1-D
datasets of equal length (docs/output.md); :func:`read_table` returns them
as ``{column: numpy array}`` and :func:`read_structured` as one numpy
structured array.  String columns come back as ``str`` arrays.
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


class FabricsimFileError(Exception):
    """The path is missing, unreadable, or not a fabricsim run file."""


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


def read_table(source, name, columns=None, required=True):
    """``{column: numpy array}`` of the table ``/name`` (a path or an open file).

    ``columns``: the columns to read (those missing are left out); default
    all 1-D datasets of the group (sub-groups such as /links/timeseries and
    2-D datasets are skipped).  A missing table raises FabricsimFileError,
    or gives None with ``required=False``.
    """
    with _opened(source) as f:
        if name not in f or not isinstance(f[name], h5py.Group):
            if not required:
                return None
            raise FabricsimFileError("%s: no /%s table" % (_file_path(f), name))
        grp = f[name]
        keys = list(grp.keys()) if columns is None else list(columns)
        out = {}
        for key in keys:
            if key in grp and isinstance(grp[key], h5py.Dataset) and len(grp[key].shape) <= 1:
                out[key] = read_array(grp[key])
        return out


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
    if not cfg:
        return {}
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
        if "links/timeseries" in f:
            ts = f["links/timeseries"]
            for key in ("tx_bytes", "queue_bytes"):
                if key in ts and isinstance(ts[key], h5py.Dataset) \
                        and len(ts[key].shape) == 2:
                    interval = py(ts[key].attrs.get("interval_ns"))
                    run.timeseries[key] = (tuple(ts[key].shape), interval)
        run.nodes = _read_group(f, "nodes", NODE_KEYS) or None
        run.flows = _read_group(f, "flows", FLOW_KEYS) or None
        if run.nodes and "name" in run.nodes:
            run.nodes["name"] = np.array([py(n) for n in run.nodes["name"]], dtype=object)
    return run
