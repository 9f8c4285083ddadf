"""The desktop applications' metrics, each on files that pass and files that fail, made
here with the libraries the applications' files are read with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deskscore.collectors.live import office_metrics as om
from deskscore.collectors.live.evaluators import METRICS, evaluate, get_state, missing_parts


def _xlsx(path: Path, rows: list[list[Any]], title: str = "Sheet1") -> str:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = title
    for row in rows:
        book.active.append(row)
    book.save(path)
    return str(path)


def _docx(path: Path, texts: list[str], **run: Any) -> str:
    import docx

    doc = docx.Document()
    for text in texts:
        r = doc.add_paragraph().add_run(text)
        for key, value in run.items():
            setattr(r.font, key, value)
    doc.save(str(path))
    return str(path)


def _pptx(path: Path, titles: list[str]) -> str:
    import pptx

    deck = pptx.Presentation()
    for title in titles:
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = title
    deck.save(str(path))
    return str(path)


def _png(path: Path, size: tuple[int, int] = (40, 30), scale: float = 1.0) -> str:
    from PIL import Image

    im = Image.new("RGB", size)
    im.putdata(
        [
            (int((x * 6) * scale) % 256, int((y * 8) * scale) % 256, int(100 * scale))
            for y in range(size[1])
            for x in range(size[0])
        ]
    )
    im.save(path)
    return str(path)


def test_office_metrics_are_registered_with_the_evaluators() -> None:
    for name in om.METRICS:
        assert METRICS[name] is om.METRICS[name]


# --------------------------------------------------------------------------- match_value


@pytest.mark.parametrize(
    ("value", "rule", "want"),
    [
        (3, {"method": "eq", "ref": 3.0}, True),
        (0, {"method": "eq", "ref": False}, False),
        (False, {"method": "eq", "ref": False}, True),
        ("a", {"method": "eq", "ref": "b"}, False),
        ("a", {"method": "ne", "ref": "b"}, True),
        ("Total 42", {"method": "re", "ref": r"\d+$"}, True),
        (1.004, {"method": "approx:0.01", "ref": 1}, True),
        (1.2, {"method": "approx:0.01", "ref": 1}, False),
        (5, {"method": "gt", "ref": 4}, True),
        ("x", {"method": "gt", "ref": 4}, False),
        ("ABC", {"method": "str_eq_ignore_case", "ref": "abc"}, True),
    ],
)
def test_match_value_follows_the_rule_method(value: Any, rule: dict, want: bool) -> None:
    assert om.match_value(value, rule) is want


def test_match_value_rejects_an_unknown_method() -> None:
    with pytest.raises(ValueError, match="unknown match method"):
        om.match_value(1, {"method": "between", "ref": 2})


# --------------------------------------------------------------------------- spreadsheets


def test_compare_table_check_cell_reads_formula_and_value(tmp_path: Path) -> None:
    good = _xlsx(tmp_path / "g.xlsx", [["a", 1], ["b", 2], ["Total", "=SUM(B1:B2)"]])
    typed = _xlsx(tmp_path / "t.xlsx", [["a", 1], ["b", 2], ["Total", 3]])
    rules = [
        {"type": "check_cell", "coordinate": "B3", "props": {"formula": {"ref": "=sum(B1:B2)"}}},
        {"type": "check_cell", "coordinate": "A3", "props": {"value": {"ref": "Total"}}},
    ]
    assert om.compare_table(good, rules=rules) == 1.0
    assert om.compare_table(typed, rules=rules) == 0.0
    assert om.compare_table(None, rules=rules) == 0.0
    bad = tmp_path / "bad.xlsx"
    bad.write_text("not a workbook")
    assert om.compare_table(str(bad), rules=rules) == 0.0


def test_compare_table_sheet_data_and_sheet_name(tmp_path: Path) -> None:
    gold = _xlsx(tmp_path / "gold.xlsx", [["x", 1.5], ["y", 2]], "Data")
    same = _xlsx(tmp_path / "same.xlsx", [["x", 1.5], ["y", 2.0], [None, None]], "Data")
    other_name = _xlsx(tmp_path / "name.xlsx", [["x", 1.5], ["y", 2]], "Sheet1")
    other_data = _xlsx(tmp_path / "data.xlsx", [["x", 1.5], ["y", 3]], "Data")
    data_rule = [{"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI0"}]
    name_rule = [{"type": "sheet_name"}]
    assert om.compare_table(same, gold, rules=data_rule + name_rule) == 1.0
    assert om.compare_table(other_name, gold, rules=data_rule) == 1.0
    assert om.compare_table(other_name, gold, rules=name_rule) == 0.0
    assert om.compare_table(other_data, gold, rules=data_rule) == 0.0
    assert om.compare_table(same, None, rules=data_rule) == 0.0


def test_compare_table_check_cell_bold(tmp_path: Path) -> None:
    import openpyxl
    from openpyxl.styles import Font

    path = _xlsx(tmp_path / "b.xlsx", [["Head"]])
    rules = [{"type": "check_cell", "coordinate": "A1", "props": {"bold": {"ref": True}}}]
    assert om.compare_table(path, rules=rules) == 0.0
    book = openpyxl.load_workbook(path)
    book.active["A1"].font = Font(bold=True)
    book.save(path)
    assert om.compare_table(path, rules=rules) == 1.0


def test_compare_table_rejects_an_unknown_rule_and_no_rules(tmp_path: Path) -> None:
    path = _xlsx(tmp_path / "a.xlsx", [[1]])
    with pytest.raises(ValueError, match="pivot_table"):
        om.compare_table(path, rules=[{"type": "pivot_table"}])
    with pytest.raises(ValueError, match="needs its rules"):
        om.compare_table(path)


# --------------------------------------------------------------------------- documents


def test_compare_docx_files(tmp_path: Path) -> None:
    a = _docx(tmp_path / "a.docx", ["Hello world", "Second"])
    spaced = _docx(tmp_path / "b.docx", ["Hello  world ", "Second"])
    upper = _docx(tmp_path / "c.docx", ["HELLO world", "Second"])
    other = _docx(tmp_path / "d.docx", ["Hello world", "Third"])
    assert om.compare_docx_files(a, spaced) == 1.0
    joined = _docx(tmp_path / "e.docx", ["Hello worldSecond"])
    assert om.compare_docx_files(a, joined) == 0.0  # blanks read as one space, not removed
    assert om.compare_docx_files(a, spaced, ignore_blanks=False) == 0.0
    assert om.compare_docx_files(a, upper) == 0.0
    assert om.compare_docx_files(a, upper, ignore_case=True) == 1.0
    assert om.compare_docx_files(a, other) == 0.0
    assert om.compare_docx_files(None, a) == 0.0


def test_compare_font_names(tmp_path: Path) -> None:
    serif = _docx(tmp_path / "s.docx", ["a", "b"], name="Liberation Serif")
    sans = _docx(tmp_path / "d.docx", ["a", "b"], name="DejaVu Sans")
    unset = _docx(tmp_path / "u.docx", ["a"])
    rules = {"font_name": "Liberation Serif"}
    assert om.compare_font_names(serif, rules) == 1.0
    assert om.compare_font_names(sans, rules) == 0.0
    assert om.compare_font_names(unset, rules) == 0.0
    blank_run = _docx(tmp_path / "b.docx", ["a", " "], name="Liberation Serif")
    assert om.compare_font_names(blank_run, rules) == 1.0
    import docx

    doc = docx.Document(blank_run)
    doc.paragraphs[1].runs[0].font.name = "DejaVu Sans"
    doc.save(blank_run)
    assert om.compare_font_names(blank_run, rules) == 0.0  # every run counts, even blank ones


def test_is_first_line_centered(tmp_path: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    path = _docx(tmp_path / "c.docx", ["Title", "Body"])
    assert om.is_first_line_centered(path) == 0.0
    doc = docx.Document(path)
    doc.paragraphs[1].alignment = WD_ALIGN_PARAGRAPH.CENTER
    doc.save(path)
    assert om.is_first_line_centered(path) == 0.0
    doc.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER
    doc.save(path)
    assert om.is_first_line_centered(path) == 1.0


def test_contains_page_break_counts_run_breaks_not_break_before(tmp_path: Path) -> None:
    import docx
    from docx.enum.text import WD_BREAK

    path = _docx(tmp_path / "p.docx", ["One", "Two", "Three"])
    assert om.contains_page_break(path) == 0.0
    doc = docx.Document(path)
    doc.paragraphs[0].runs[0].add_break(WD_BREAK.PAGE)
    doc.save(path)
    assert om.contains_page_break(path) == 1.0
    assert om.contains_page_break(path, {"page_break_count": 1}) == 1.0
    doc.paragraphs[2].paragraph_format.page_break_before = True
    doc.save(path)
    assert om.contains_page_break(path, {"page_break_count": 1}) == 1.0
    doc.paragraphs[2].runs[0].add_break(WD_BREAK.PAGE)
    doc.save(path)
    assert om.contains_page_break(path, {"page_break_count": 1}) == 0.0
    assert om.contains_page_break(path, {"page_break_count": 2}) == 1.0


def test_evaluate_strike_through_last_paragraph(tmp_path: Path) -> None:
    import docx

    original = _docx(tmp_path / "o.docx", ["Keep", "Strike me"])
    path = _docx(tmp_path / "s.docx", ["Keep", "Strike me"])
    assert om.evaluate_strike_through_last_paragraph(path, original) == 0.0
    doc = docx.Document(path)
    doc.paragraphs[0].runs[0].font.strike = True
    doc.save(path)
    assert om.evaluate_strike_through_last_paragraph(path, original) == 0.0
    doc.paragraphs[1].runs[0].font.strike = True
    doc.save(path)
    assert om.evaluate_strike_through_last_paragraph(path, original) == 1.0
    doc.paragraphs[1].add_run(" ")
    doc.save(path)
    assert om.evaluate_strike_through_last_paragraph(path, original) == 0.0  # every run
    doc.paragraphs[1].runs[0].text = "Struck and changed"
    doc.save(path)
    assert om.evaluate_strike_through_last_paragraph(path, original) == 0.0


# --------------------------------------------------------------------------- slides


def test_compare_pptx_files(tmp_path: Path) -> None:
    gold = _pptx(tmp_path / "g.pptx", ["One", "Two"])
    same = _pptx(tmp_path / "s.pptx", ["One", "Two"])
    retitled = _pptx(tmp_path / "r.pptx", ["One", "Zwei"])
    longer = _pptx(tmp_path / "l.pptx", ["One", "Two", "Three"])
    assert om.compare_pptx_files(same, gold) == 1.0
    assert om.compare_pptx_files(retitled, gold) == 0.0
    assert om.compare_pptx_files(retitled, gold, examine_text=False) == 1.0
    assert om.compare_pptx_files(longer, gold) == 0.0
    assert om.compare_pptx_files(None, gold) == 0.0


# --------------------------------------------------------------------------- images


def test_compare_images(tmp_path: Path) -> None:
    a = _png(tmp_path / "a.png")
    b = _png(tmp_path / "b.png")
    darker = _png(tmp_path / "d.png", scale=0.5)
    bigger = _png(tmp_path / "e.png", size=(41, 30))
    assert om.compare_images(a, b) == 1.0
    assert om.compare_images(a, darker) == 0.0
    assert om.compare_images(a, bigger) == 0.0
    assert om.compare_images(a, None) == 0.0


def test_check_image_size(tmp_path: Path) -> None:
    path = _png(tmp_path / "a.png", size=(80, 60))
    assert om.check_image_size(path, {"width": 80, "height": 60}) == 1.0
    assert om.check_image_size(path, {"height": 60}) == 1.0
    assert om.check_image_size(path, {"width": 60, "height": 80}) == 0.0
    assert om.check_image_size(None, {"width": 80}) == 0.0


def test_check_image_mirror(tmp_path: Path) -> None:
    from PIL import Image, ImageOps

    original = _png(tmp_path / "o.png")
    mirrored = tmp_path / "m.png"
    flipped = tmp_path / "f.png"
    with Image.open(original) as im:
        ImageOps.mirror(im).save(mirrored)
        ImageOps.flip(im).save(flipped)
    assert om.check_image_mirror(str(mirrored), original) == 1.0
    assert om.check_image_mirror(str(flipped), original) == 0.0
    assert om.check_image_mirror(original, original) == 0.0


def test_check_brightness_decrease_and_structure_sim(tmp_path: Path) -> None:
    from PIL import Image, ImageEnhance, ImageOps

    original = _png(tmp_path / "o.png")
    darker, brighter, other = (tmp_path / n for n in ("d.png", "b.png", "x.png"))
    with Image.open(original) as im:
        ImageEnhance.Brightness(im).enhance(0.6).save(darker)
        ImageEnhance.Brightness(im).enhance(1.3).save(brighter)
        ImageEnhance.Brightness(ImageOps.flip(im)).enhance(0.6).save(other)
    assert om.check_brightness_decrease_and_structure_sim(str(darker), original) == 1.0
    assert om.check_brightness_decrease_and_structure_sim(str(brighter), original) == 0.0
    assert om.check_brightness_decrease_and_structure_sim(str(other), original) == 0.0


# --------------------------------------------------------------------------- Chromium


def _roots(*children: dict) -> dict:
    return {"bookmark_bar": {"children": list(children), "type": "folder"}, "other": {}}


def test_is_expected_bookmarks() -> None:
    work = {"type": "folder", "name": "Work", "children": []}
    debian = {"type": "url", "name": "Debian", "url": "https://www.debian.org/"}
    folders = {"type": "bookmark_bar_folders_names", "names": ["Work"]}
    urls = {"type": "bookmark_bar_websites_urls", "urls": ["https://www.debian.org/"]}
    assert om.is_expected_bookmarks(_roots(work, debian), folders) == 1.0
    assert om.is_expected_bookmarks(_roots(work, debian), urls) == 1.0
    assert om.is_expected_bookmarks(_roots(debian), folders) == 0.0
    assert om.is_expected_bookmarks(_roots(work, work), folders) == 1.0  # as sets
    assert om.is_expected_bookmarks(_roots(work), urls) == 0.0
    assert om.is_expected_bookmarks(None, urls) == 0.0


def test_check_enabled_experiments() -> None:
    rule = {"type": "names", "names": ["a@1", "b"]}
    assert om.check_enabled_experiments(["b", "a@1"], rule) == 1.0
    assert om.check_enabled_experiments(["a@1"], rule) == 0.0
    assert om.check_enabled_experiments(["a@1", "b", "c"], rule) == 0.0
    assert om.check_enabled_experiments(None, rule) == 0.0


def test_check_json(tmp_path: Path) -> None:
    path = tmp_path / "Preferences"
    path.write_text(json.dumps({"session": {"restore_on_startup": 4, "startup_urls": ["u"]}}))
    rules = {
        "expect": [{"key": ["session", "startup_urls", 0], "method": "eq", "ref": "u"}],
        "unexpect": [{"key": ["session", "restore_on_startup"], "method": "eq", "ref": 5}],
    }
    assert om.check_json(str(path), rules) == 1.0
    assert om.check_json(str(path), {"expect": [{"key": ["homepage"], "ref": "u"}]}) == 0.0
    assert (
        om.check_json(
            str(path), {"unexpect": [{"key": ["session", "restore_on_startup"], "ref": 4}]}
        )
        == 0.0
    )
    assert om.check_json(None, rules) == 0.0


# --------------------------------------------------------------------------- VLC


def _vlcrc(tmp_path: Path, *lines: str) -> str:
    path = tmp_path / "vlcrc"
    path.write_text("\n".join(["[core] # core program", *lines]) + "\n")
    return str(path)


def test_check_global_key_play_pause(tmp_path: Path) -> None:
    unset = _vlcrc(tmp_path, "#global-key-play-pause=")
    assert om.check_global_key_play_pause(unset, {"expected_global_key_play_pause": 1}) == 0.0
    assert om.check_global_key_play_pause(unset, {"expected_global_key_play_pause": 0}) == 1.0
    bound = _vlcrc(tmp_path, "global-key-play-pause=Ctrl+p")
    assert om.check_global_key_play_pause(bound, {"expected_global_key_play_pause": 1}) == 1.0
    assert om.check_global_key_play_pause(None, {"expected_global_key_play_pause": 0}) == 0.0


def test_check_one_instance_when_started_from_file(tmp_path: Path) -> None:
    rule = {"expected_one_instance_when_started_from_file": 0}
    assert om.check_one_instance_when_started_from_file(_vlcrc(tmp_path, "#x=1"), rule) == 0.0
    default = {"expected_one_instance_when_started_from_file": 1}
    assert om.check_one_instance_when_started_from_file(_vlcrc(tmp_path, "#x=0"), default) == 1.0
    off = _vlcrc(tmp_path, "one-instance-when-started-from-file=0")
    assert om.check_one_instance_when_started_from_file(off, rule) == 1.0
    on = _vlcrc(tmp_path, "one-instance-when-started-from-file=1")
    assert om.check_one_instance_when_started_from_file(on, rule) == 0.0


def test_is_vlc_recordings_folder(tmp_path: Path) -> None:
    rule = {"recording_file_path": "~/Recordings"}
    under_home = _vlcrc(tmp_path, "input-record-path=/home/user/Recordings/")
    assert om.is_vlc_recordings_folder(under_home, rule) == 1.0
    elsewhere = _vlcrc(tmp_path, "input-record-path=/home/user/Videos")
    assert om.is_vlc_recordings_folder(elsewhere, rule) == 0.0
    relative = _vlcrc(tmp_path, "input-record-path=Recordings")
    assert om.is_vlc_recordings_folder(relative, rule) == 0.0
    absolute = {"recording_file_path": "/srv/rec"}
    assert (
        om.is_vlc_recordings_folder(_vlcrc(tmp_path, "input-record-path=/srv/rec"), absolute) == 1.0
    )
    assert om.is_vlc_recordings_folder(_vlcrc(tmp_path, "#input-record-path="), rule) == 0.0


# --------------------------------------------------------------------------- Thunderbird


def test_check_thunderbird_prefs(tmp_path: Path) -> None:
    path = tmp_path / "prefs.js"
    path.write_text(
        "// Mozilla User Preferences\n"
        'user_pref("mail.spellcheck.inline", false);\n'
        'user_pref("mail.identity.id1.fullName", "Ada \\"L\\"");\n'
        'user_pref("mail.check_time", 5);\n'
    )
    prefs = om.read_prefs_js(str(path))
    assert prefs == {
        "mail.spellcheck.inline": False,
        "mail.identity.id1.fullName": 'Ada "L"',
        "mail.check_time": 5,
    }
    ok = {
        "expect": {"mail.spellcheck.inline": {"method": "eq", "ref": False}},
        "unexpect": {"mail.check_time": {"method": "gt", "ref": 10}},
    }
    assert om.check_thunderbird_prefs(str(path), ok) == 1.0
    assert om.check_thunderbird_prefs(str(path), {"expect": {"absent.pref": {"ref": 1}}}) == 0.0
    assert (
        om.check_thunderbird_prefs(str(path), {"unexpect": {"mail.check_time": {"ref": 5}}}) == 0.0
    )
    assert om.check_thunderbird_prefs(None, ok) == 0.0


# --------------------------------------------------------------------------- getters


class FileDesktop:
    """Answers the controller's `file` from a dict of paths."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def file(self, path: str) -> bytes | None:
        return self.files.get(path)


def test_chromium_getters_read_the_profile(tmp_path: Path) -> None:
    profile = "~/.config/chromium"
    desktop = FileDesktop(
        {
            f"{profile}/Default/Bookmarks": json.dumps({"roots": _roots()}).encode(),
            f"{profile}/Local State": b'{"browser": {"enabled_labs_experiments": ["x@1"]}}',
            f"{profile}/Default/Preferences": json.dumps(
                {"default_search_provider_data": {"template_url_data": {"short_name": "DDG"}}}
            ).encode(),
        }
    )
    kw: dict[str, Any] = {"workdir": str(tmp_path)}
    assert get_state(desktop, {"type": "bookmarks"}, **kw) == _roots()  # type: ignore[arg-type]
    assert get_state(desktop, {"type": "enabled_experiments"}, **kw) == ["x@1"]  # type: ignore[arg-type]
    assert get_state(desktop, {"type": "default_search_engine"}, **kw) == "DDG"  # type: ignore[arg-type]
    empty = FileDesktop({})
    assert get_state(empty, {"type": "bookmarks"}, **kw) is None  # type: ignore[arg-type]
    assert get_state(empty, {"type": "enabled_experiments"}, **kw) == []  # type: ignore[arg-type]
    assert get_state(empty, {"type": "default_search_engine"}, **kw) == "Google"  # type: ignore[arg-type]


def test_vm_file_gives_a_local_copy_to_the_metrics_that_read_files(tmp_path: Path) -> None:
    desktop = FileDesktop({"~/a.bin": b"\x00\xffdata"})
    config = {"type": "vm_file", "path": "~/a.bin"}
    local = get_state(desktop, config, workdir=str(tmp_path), as_path=True)  # type: ignore[arg-type]
    assert Path(local).read_bytes() == b"\x00\xffdata"
    assert Path(local).parent == tmp_path
    text = get_state(desktop, config, workdir=str(tmp_path))  # type: ignore[arg-type]
    assert text == "\x00\ufffddata"
    missing = {"type": "vm_file", "path": "~/none"}
    assert get_state(desktop, missing, workdir=str(tmp_path), as_path=True) is None  # type: ignore[arg-type]
    vlc = get_state(desktop, {"type": "vlc_config", "path": "~/a.bin"}, workdir=str(tmp_path))  # type: ignore[arg-type]
    assert Path(vlc).read_bytes() == b"\x00\xffdata"


def test_generated_file_is_a_path_for_file_metrics_and_text_for_text_metrics(
    tmp_path: Path,
) -> None:
    config = {"type": "generated_file", "name": "notes.txt"}
    path = get_state(FileDesktop({}), config, workdir=str(tmp_path), as_path=True)  # type: ignore[arg-type]
    text = get_state(FileDesktop({}), config, workdir=str(tmp_path))  # type: ignore[arg-type]
    assert Path(path).read_text() == text
    assert text.startswith("Teh quick")


def test_an_office_evaluator_scores_through_evaluate(tmp_path: Path) -> None:
    good = Path(_xlsx(tmp_path / "g.xlsx", [["Total", "=SUM(1,2)"]])).read_bytes()
    evaluator = {
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "~/t.xlsx"},
        "options": {
            "rules": [
                {
                    "type": "check_cell",
                    "coordinate": "B1",
                    "props": {"formula": {"ref": "=SUM(1,2)"}},
                }
            ]
        },
    }
    assert missing_parts(evaluator) == []
    assert evaluate(FileDesktop({"~/t.xlsx": good}), evaluator, last_action="DONE").score == 1.0  # type: ignore[arg-type]
    assert evaluate(FileDesktop({}), evaluator, last_action="DONE").score == 0.0  # type: ignore[arg-type]
    unknown = {**evaluator, "result": {"type": "cloud_file", "path": "x"}}
    assert missing_parts(unknown) == ["getter cloud_file"]


def test_a_missing_file_library_leaves_the_task_unevaluated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    good = Path(_xlsx(tmp_path / "g.xlsx", [["x"]])).read_bytes()
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    evaluator = {
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "~/t.xlsx"},
        "options": {"rules": [{"type": "sheet_name"}]},
    }
    evaluation = evaluate(FileDesktop({"~/t.xlsx": good}), evaluator, last_action="DONE")  # type: ignore[arg-type]
    assert evaluation.status == "unevaluated"
    assert "deskscore[desktops]" in evaluation.details["reason"]
