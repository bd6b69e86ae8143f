"""The settings objects the reading understands by key: a known library's in-process settings, and the
environment (``known`` re-exports them; ``freeact_tui.effects.settings`` reads their forms)."""

from __future__ import annotations

from dataclasses import dataclass

from freeact_tui.effects.classes import Kind
from freeact_tui.effects.pandas_options import OptionUse, keys_of


@dataclass(frozen=True)
class Settings:
    """A process-wide settings object a cell may read and change by key (``rcParams["font.size"] = 12``).

    A key is judged by what its value is to the library: a module it imports (``backend``: only the
    ``PLOT_BACKENDS``), a path it reads or writes later (checked as a write), a program or code it runs
    (cannot be told), or else, listed in ``keys`` (where the library's keys are not listed: in one of
    ``groups``), a setting of how the library computes and draws (only computes). Any other key cannot be told, and so can a key or value given at run time.
    Only the forms of ``freeact_tui.effects.settings`` are understood; the object as a value is not.
    """

    groups: frozenset[str] = frozenset()
    keys: frozenset[str] | None = None
    """The keys that only compute, each listed (``None``: any key of one of ``groups``)."""
    module_keys: frozenset[str] = frozenset()
    path_keys: frozenset[str] = frozenset()
    program_keys: frozenset[str] = frozenset()
    attributes: bool = False
    """Keys are attribute paths (``pd.options.display.max_rows``), not items."""
    read: Kind | None = None
    """What reading it is (``Kind.ENVIRONMENT`` for ``os.environ``; ``None``: it only computes)."""
    writable: bool = True
    """Whether a cell may change it (the environment: no, later code reads it)."""

    def computes(self, key: str) -> bool:
        """Whether setting ``key`` only changes how the library computes (a key listed, or of a group)."""
        return key in self.keys if self.keys is not None else key.split(".")[0] in self.groups


_RC = Settings(
    # every rcParam of matplotlib is decided here (a test enumerates them): these only change how it computes
    # and draws; a key not listed (one a later matplotlib adds) cannot be told
    keys=frozenset(
        "agg.path.chunksize axes.autolimit_mode axes.axisbelow axes.edgecolor axes.facecolor "
        "axes.formatter.limits axes.formatter.min_exponent axes.formatter.offset_threshold "
        "axes.formatter.use_locale axes.formatter.use_mathtext axes.formatter.useoffset axes.grid "
        "axes.grid.axis axes.grid.which axes.labelcolor axes.labelpad axes.labelsize axes.labelweight "
        "axes.linewidth axes.prop_cycle axes.spines.bottom axes.spines.left axes.spines.right axes.spines.top "
        "axes.titlecolor axes.titlelocation axes.titlepad axes.titlesize axes.titleweight axes.titley "
        "axes.unicode_minus axes.xmargin axes.ymargin axes.zmargin axes3d.automargin axes3d.depthshade "
        "axes3d.depthshade_minalpha axes3d.grid axes3d.mouserotationstyle axes3d.snap_rotation "
        "axes3d.trackballborder axes3d.trackballsize axes3d.xaxis.panecolor axes3d.yaxis.panecolor "
        "axes3d.zaxis.panecolor boxplot.bootstrap boxplot.boxprops.color boxplot.boxprops.linestyle "
        "boxplot.boxprops.linewidth boxplot.capprops.color boxplot.capprops.linestyle "
        "boxplot.capprops.linewidth boxplot.flierprops.color boxplot.flierprops.linestyle "
        "boxplot.flierprops.linewidth boxplot.flierprops.marker boxplot.flierprops.markeredgecolor "
        "boxplot.flierprops.markeredgewidth boxplot.flierprops.markerfacecolor boxplot.flierprops.markersize "
        "boxplot.meanline boxplot.meanprops.color boxplot.meanprops.linestyle boxplot.meanprops.linewidth "
        "boxplot.meanprops.marker boxplot.meanprops.markeredgecolor boxplot.meanprops.markerfacecolor "
        "boxplot.meanprops.markersize boxplot.medianprops.color boxplot.medianprops.linestyle "
        "boxplot.medianprops.linewidth boxplot.notch boxplot.patchartist boxplot.showbox boxplot.showcaps "
        "boxplot.showfliers boxplot.showmeans boxplot.vertical boxplot.whiskerprops.color "
        "boxplot.whiskerprops.linestyle boxplot.whiskerprops.linewidth boxplot.whiskers contour.algorithm "
        "contour.corner_mask contour.linewidth contour.negative_linestyle date.autoformatter.day "
        "date.autoformatter.hour date.autoformatter.microsecond date.autoformatter.minute "
        "date.autoformatter.month date.autoformatter.second date.autoformatter.year date.converter date.epoch "
        "date.interval_multiples docstring.hardcopy errorbar.capsize errorbar.capthick errorbar.elinewidth "
        "figure.autolayout figure.constrained_layout.h_pad figure.constrained_layout.hspace "
        "figure.constrained_layout.use figure.constrained_layout.w_pad figure.constrained_layout.wspace "
        "figure.dpi figure.edgecolor figure.facecolor figure.figsize figure.frameon figure.labelsize "
        "figure.labelweight figure.max_open_warning figure.raise_window figure.subplot.bottom "
        "figure.subplot.hspace figure.subplot.left figure.subplot.right figure.subplot.top "
        "figure.subplot.wspace figure.titlesize figure.titleweight font.cursive font.enable_last_resort "
        "font.family font.fantasy font.monospace font.sans-serif font.serif font.size font.stretch font.style "
        "font.variant font.weight grid.alpha grid.color grid.linestyle grid.linewidth grid.major.alpha "
        "grid.major.color grid.major.linestyle grid.major.linewidth grid.minor.alpha grid.minor.color "
        "grid.minor.linestyle grid.minor.linewidth hatch.color hatch.linewidth hist.bins image.aspect "
        "image.cmap image.composite_image image.interpolation image.interpolation_stage image.lut "
        "image.origin image.resample interactive keymap.back keymap.copy keymap.forward keymap.fullscreen "
        "keymap.grid keymap.grid_minor keymap.help keymap.home keymap.pan keymap.quit keymap.quit_all "
        "keymap.save keymap.xscale keymap.yscale keymap.zoom legend.borderaxespad legend.borderpad "
        "legend.columnspacing legend.edgecolor legend.facecolor legend.fancybox legend.fontsize "
        "legend.framealpha legend.frameon legend.handleheight legend.handlelength legend.handletextpad "
        "legend.labelcolor legend.labelspacing legend.linewidth legend.loc legend.markerscale "
        "legend.numpoints legend.scatterpoints legend.shadow legend.title_fontsize lines.antialiased "
        "lines.color lines.dash_capstyle lines.dash_joinstyle lines.dashdot_pattern lines.dashed_pattern "
        "lines.dotted_pattern lines.linestyle lines.linewidth lines.marker lines.markeredgecolor "
        "lines.markeredgewidth lines.markerfacecolor lines.markersize lines.scale_dashes lines.solid_capstyle "
        "lines.solid_joinstyle macosx.window_mode markers.fillstyle mathtext.bf mathtext.bfit mathtext.cal "
        "mathtext.default mathtext.fallback mathtext.fontset mathtext.it mathtext.rm mathtext.sf mathtext.tt "
        "patch.antialiased patch.edgecolor patch.facecolor patch.force_edgecolor patch.linewidth path.effects "
        "path.simplify path.simplify_threshold path.sketch path.snap pcolor.shading pcolormesh.snap "
        "pdf.compression pdf.fonttype pdf.inheritcolor pdf.use14corefonts pgf.rcfonts polaraxes.grid "
        "ps.distiller.res ps.fonttype ps.papersize ps.useafm savefig.bbox savefig.dpi savefig.edgecolor "
        "savefig.facecolor savefig.format savefig.orientation savefig.pad_inches savefig.transparent "
        "scatter.edgecolors scatter.marker svg.fonttype svg.hashsalt svg.id svg.image_inline text.antialiased "
        "text.color text.hinting text.hinting_factor text.kerning_factor text.language text.parse_math "
        "timezone tk.window_focus toolbar xaxis.labellocation xtick.alignment xtick.bottom xtick.color "
        "xtick.direction xtick.labelbottom xtick.labelcolor xtick.labelsize xtick.labeltop xtick.major.bottom "
        "xtick.major.pad xtick.major.size xtick.major.top xtick.major.width xtick.minor.bottom "
        "xtick.minor.ndivs xtick.minor.pad xtick.minor.size xtick.minor.top xtick.minor.visible "
        "xtick.minor.width xtick.top yaxis.labellocation ytick.alignment ytick.color ytick.direction "
        "ytick.labelcolor ytick.labelleft ytick.labelright ytick.labelsize ytick.left ytick.major.left "
        "ytick.major.pad ytick.major.right ytick.major.size ytick.major.width ytick.minor.left "
        "ytick.minor.ndivs ytick.minor.pad ytick.minor.right ytick.minor.size ytick.minor.visible "
        "ytick.minor.width ytick.right".split()
    ),
    module_keys=frozenset({"backend"}),
    path_keys=frozenset({"savefig.directory"}),
    # LaTeX, ghostscript, ffmpeg and ImageMagick run as programs on the next draw or save, with the preamble
    # or arguments as their input; ``figure.hooks`` imports modules and calls them; webagg serves and opens
    # a browser; the fallback picks a backend module to import
    program_keys=frozenset(
        "text.usetex text.latex.preamble text.latex.engine pgf.preamble pgf.texsystem pdf.preamble "
        "ps.usedistiller figure.hooks webagg.open_in_browser webagg.address webagg.port webagg.port_retries "
        "backend_fallback _internal.classic_mode animation.bitrate animation.codec animation.convert_args "
        "animation.convert_path animation.embed_limit animation.ffmpeg_args animation.ffmpeg_path "
        "animation.frame_format animation.html animation.writer".split()
    ),
)
_ENVIRON = Settings(read=Kind.ENVIRONMENT, writable=False)

SETTINGS: dict[str, Settings] = {
    "matplotlib.rcParams": _RC,
    "matplotlib.pyplot.rcParams": _RC,
    "pandas.options": Settings(
        # every option of pandas, by key (``pandas_options``): an engine, a storage or an accelerator is a
        # library pandas imports by name, which cannot be told
        keys=keys_of(OptionUse.COMPUTES),
        module_keys=keys_of(OptionUse.MODULE),
        program_keys=keys_of(OptionUse.IMPORTS),
        attributes=True,
    ),
    "os.environ": _ENVIRON,
    "os.environb": _ENVIRON,
}
"""Settings objects by their full dotted name: a known library's in-process settings, and the environment."""

SETTINGS_READS = frozenset({"get", "copy", "keys", "values", "items"})
"""Methods that read a settings object (``update`` changes it: each key is judged)."""


__all__ = ["SETTINGS", "SETTINGS_READS", "Settings"]
