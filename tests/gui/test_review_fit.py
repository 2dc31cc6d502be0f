"""A review picture holds every word it has, whole, for any number of runs compared (issue:
a compare review of 4 runs ran off the right edge, cutting "46.2 m…").

Read from the SVG export: each text element's box (svg_geometry.text_boxes, with the
review's own font metrics) lies inside the page, every table cell and legend label is one
whole text, every fact's words are there in order; the PNG leaves its margins blank and is
the picture the SVG draws back."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tflaunch.core.report.review import Review, comparison_review
from tflaunch.gui.app import create_app
from tflaunch.gui.review.review_image import HEIGHT, MARGIN, WIDTH, measure_text, render_image, render_svg
from tflaunch.gui.review.svg_geometry import text_boxes

from ..compare_builders import sides
from .test_export_geometry import differing_share, drawn
from .test_review_images import keep, pixels

CASES = {f"{n} runs": (n, 1) for n in (2, 3, 4, 6, 8)} | {"8 sides of 3 runs": (8, 3)}


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def check_fits(review: Review, legend: bool = True) -> None:
    """`legend`: the series' labels are a legend (a comparison's); a run's review names its
    one curve in the chart's own words instead."""
    svg = render_svg(review)
    boxes = text_boxes(svg, measure_text)
    outside = [(b.text, round(b.left), round(b.top), round(b.right), round(b.bottom)) for b in boxes
               if not b.within((0, 0, WIDTH, HEIGHT))]
    assert not outside, outside
    texts = [b.text for b in boxes]
    header, rows = review.table or ([], [])
    missing = [cell for cell in [*header, *(c for row in rows for c in row)] if cell and cell not in texts]
    assert not missing, f"cut or elided: {missing}"
    labels = [s.label for s in review.series] if legend else []
    assert not [label for label in labels if label not in texts], "every legend label whole"
    page = squeezed("".join(texts))
    for label, value in review.facts:
        assert squeezed(label) + squeezed(value) in page, f"fact {label!r} not whole"
    assert squeezed(review.headline) in page
    png = render_image(review)
    ink = pixels(png)[10:, :].astype(int)
    margin = MARGIN // 2
    for name, strip in (("right", ink[:, WIDTH - margin:]), ("bottom", ink[-margin:, :])):
        assert (strip > 250).all(), f"something drawn in the {name} margin"
    assert differing_share(png, drawn(svg)) < 0.005


@pytest.mark.parametrize("case", list(CASES))
def test_a_comparison_of_any_number_of_runs_fits_its_picture(qapp, case, tmp_path):
    create_app()
    count, each = CASES[case]
    review = comparison_review(sides(count, runs_each=each, long_paths=each == 1))
    check_fits(review)
    if count in (4, 8):
        path = tmp_path / f"review-compare-{count}.png"
        render_image(review).save(str(path))
        keep(path, path.name)


def test_the_fit_check_finds_a_value_that_runs_off_the_page(qapp):
    create_app()
    review = comparison_review(sides(2))
    header, rows = review.table
    rows[0][-1] = "46.2 MiB " * 30  # wider than the page: what the check is for
    with pytest.raises(AssertionError):
        check_fits(review)


def test_no_margin_pixel_is_ink_for_a_blank_page():
    blank = np.full((HEIGHT, WIDTH, 3), 255)
    assert (blank[:, WIDTH - MARGIN // 2:] > 250).all()


def test_a_long_title_takes_smaller_type_or_a_second_line_never_the_subtitles_place(qapp):
    """Seen in `tflaunch report` of a program run: "python programs/fit_tfdata.py --steps 400:
    Ready in 5.40 s (at first step, then stopped)" wrapped past its one-line box, and its second
    line was drawn over "run #2 · 2026-11-29 11:33"."""
    from tflaunch.core.report.review import run_review

    from ..builders import finished_record

    create_app()
    record = finished_record()
    record.config = record.config.replace(program=("python", "programs/a_rather_long_training_script_name.py",
                                                   "--steps", "400", "--data", "/data/imagenet/train"))
    record.history_id = 2
    review = run_review(record)
    assert len(review.title) > 90, review.title
    boxes = text_boxes(render_svg(review), measure_text)
    subtitle = [b for b in boxes if b.text == review.subtitle]
    title = [b for b in boxes if b.top < 60 and b.text and b.text in review.title]  # the header's lines
    assert title and subtitle
    assert max(b.bottom for b in title) <= min(b.top for b in subtitle), "the subtitle is below the title"
    assert squeezed(review.title) in squeezed("".join(b.text for b in title)), "the title whole"
    check_fits(review, legend=False)
