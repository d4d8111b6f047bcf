"""save_figure under the inline backend: the saved PNG is shown, the figure closed (it is
not drawn a second time at the end of the cell); other backends show nothing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from workbench.plots import save_figure  # noqa: E402

INLINE = "module://matplotlib_inline.backend_inline"


def _line_figure():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], [1.0, 2.0, 3.0], marker="o")
    return fig


def test_inline_backend_shows_the_saved_png_and_closes_the_figure(monkeypatch, tmp_path):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    monkeypatch.setattr(matplotlib, "get_backend", lambda: INLINE)
    fig = _line_figure()
    path = save_figure(fig, "inline", "fig", formats=("svg", "png"), simulated=False,
                       directory=tmp_path)[1]
    png = path.read_bytes()
    assert len(shown) == 1 and isinstance(shown[0], IPython.display.Image)
    assert shown[0].data == png
    pixels = int.from_bytes(png[16:20], "big")
    assert shown[0].width == round(pixels * fig.dpi / 150) < pixels
    assert not plt.fignum_exists(fig.number)


def test_other_backends_show_nothing_and_keep_the_figure(monkeypatch, tmp_path):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    fig = _line_figure()
    save_figure(fig, "inline", "fig", simulated=False, directory=tmp_path)
    assert "inline" not in matplotlib.get_backend()
    assert shown == []
    assert plt.fignum_exists(fig.number)
    plt.close(fig)
