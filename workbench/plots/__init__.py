"""Plots for the study notebooks: ``plot_*`` functions and ``save_figure``.

The ``plot_*`` functions take tidy frames and return Axes (``plot_scatter_matrix`` an
array of them); they never save. ``save_figure`` writes deterministic PNG/SVG files to
``figures/<study>/``. Japanese labels render with IPAexGothic (from japanize-matplotlib,
registered explicitly, not through its import side effects) as a fallback font, and
every figure made from simulated results carries the text "simulated judges".

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"method": ["checklist", "holistic"], "estimate": [0.09, 0.1],
...                       "ci_low": [0.07, 0.08], "ci_high": [0.11, 0.12],
...                       "backend": "sim"})
>>> ax = plot_estimates(frame, y="method", title="一貫性指標")
>>> has_sim_label(ax)
True
"""

from workbench.plots._charts import (
    plot_bars,
    plot_correlations,
    plot_cost_cache,
    plot_estimates,
    plot_heatmap,
    plot_scatter_matrix,
)
from workbench.plots._figure import (
    CJK_FONT,
    FORMATS,
    PNG_DPI,
    SIM_LABEL,
    STYLE,
    SVG_HASHSALT,
    add_sim_label,
    has_sim_label,
    register_fonts,
    save_figure,
    use_style,
)
from workbench.plots._names import DISPLAY_NAMES, display_name
from workbench.plots._rows import plot_weakness_map, plot_width_ratio, wrap_label

__all__ = [
    "CJK_FONT",
    "DISPLAY_NAMES",
    "FORMATS",
    "PNG_DPI",
    "SIM_LABEL",
    "STYLE",
    "SVG_HASHSALT",
    "add_sim_label",
    "display_name",
    "has_sim_label",
    "plot_bars",
    "plot_correlations",
    "plot_cost_cache",
    "plot_estimates",
    "plot_heatmap",
    "plot_scatter_matrix",
    "plot_weakness_map",
    "plot_width_ratio",
    "register_fonts",
    "save_figure",
    "use_style",
    "wrap_label",
]
