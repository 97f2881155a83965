"""fabricsim_analysis: read, summarise, compare and plot fabricsim output files (HDF5).

Modules
-------
io       open an output file (one-line FabricsimFileError if it is missing or
         not fabricsim output), read tables as dicts of numpy arrays or
         structured arrays, attributes, the run's parameters; load_run()
stats    percentiles, link utilization, flow completion times, throughput,
         relative differences
fmt      numbers with units, aligned text tables, CSV files
plot     matplotlib with the Agg backend, saving figures, grouped bars
cli      the scripts' shared arguments (input files, --label, --csv, --plot)
         and their one-line error handling
report   fabricsim_report.py: summary, JSON and plots of one run
busbw    fabricsim_busbw.py: NCCL-style busbw against size
dnn      fabricsim_dnn.py: DNN iteration breakdown, stacked bars, Gantt chart
compare  fabricsim_compare.py: two runs side by side with relative differences
tacos    fabricsim_tacos.py: TACOS against other algorithms, link utilization over time
cluster  fabricsim_cluster.py: a cluster queue's JWT, JRT, JCT, stability,
         refusals by cause and GPU utilization over time, per scheme

The names below were the module fabricsim_analysis.py before it became this
package; ``import fabricsim_analysis as fa; fa.load_run(path)`` still works.
"""

from .fmt import NA, fmt_bytes, fmt_float, fmt_int, fmt_pct, fmt_rel, fmt_time_ns, table, write_csv
from .io import (DEFAULT_CLASS_NAMES, FLOW_KEYS, LINK_KEYS, META_KEYS, NODE_KEYS, FabricsimFileError,
                 Run, finished_mask, has_table, load_run, open_file, param, parse_class_names,
                 read_attrs, read_params, read_structured, read_table)
from .report import SUMMARY_KEYS, compute_report, format_report, summary_items, utilization_heatmap
from .stats import (PERCENTILES, aggregate_throughput, class_name, flow_completion_times,
                    link_sort_order, link_utilization, node_counts, percentile_stats, rel_diff,
                    traffic_time_ns, unfinished_flows, utilization_by_class)

# Former private helpers, kept for code that used them.
from .fmt import table as _table  # noqa: E402,F401
from .io import py as _py, read_array as _read_array  # noqa: E402,F401
from .report import _jsonable  # noqa: E402,F401
from .stats import num as _num  # noqa: E402,F401

__all__ = [
    # io
    "DEFAULT_CLASS_NAMES", "FLOW_KEYS", "LINK_KEYS", "META_KEYS", "NODE_KEYS", "FabricsimFileError", "Run",
    "finished_mask", "has_table", "load_run", "open_file", "param", "parse_class_names", "read_attrs",
    "read_params", "read_structured", "read_table",
    # stats
    "PERCENTILES", "aggregate_throughput", "class_name", "flow_completion_times", "link_sort_order",
    "link_utilization", "node_counts", "percentile_stats", "rel_diff", "traffic_time_ns", "unfinished_flows",
    "utilization_by_class",
    # fmt
    "NA", "fmt_bytes", "fmt_float", "fmt_int", "fmt_pct", "fmt_rel", "fmt_time_ns", "table", "write_csv",
    # report
    "SUMMARY_KEYS", "compute_report", "format_report", "summary_items", "utilization_heatmap",
]
