"""The final state each desktop task asks for, made with the file libraries.

`SOLUTIONS[task_id](home)` edits the files under `home` (the desktop user's home folder,
after the task's setup) into the state its evaluator scores 1: the target a scripted agent
has to reach through the applications, spelled out. The tests run every task's setup, this
solution and its evaluator.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from pathlib import Path

DESKTOP = "Desktop"


def _xlsx(path: Path, edit: Callable[[object], None]) -> None:
    import openpyxl

    book = openpyxl.load_workbook(path)
    edit(book)
    book.save(path)


def calc_sum_formula(home: Path) -> None:
    _xlsx(home / DESKTOP / "sales.xlsx", lambda b: b.active.__setitem__("B6", "=SUM(B2:B5)"))


def calc_average_formula(home: Path) -> None:
    def edit(book: object) -> None:
        sheet = book.active  # type: ignore[attr-defined]
        sheet["A7"] = "Average"
        sheet["B7"] = "=AVERAGE(B2:B5)"

    _xlsx(home / DESKTOP / "sales_average.xlsx", edit)


def calc_fill_amounts(home: Path) -> None:
    def edit(book: object) -> None:
        sheet = book.active  # type: ignore[attr-defined]
        for row in range(2, sheet.max_row + 1):
            sheet.cell(row, 4).value = round(sheet.cell(row, 2).value * sheet.cell(row, 3).value, 2)

    _xlsx(home / DESKTOP / "prices.xlsx", edit)


def calc_rename_sheet(home: Path) -> None:
    _xlsx(home / DESKTOP / "budget.xlsx", lambda b: setattr(b.active, "title", "Budget 2026"))


def calc_sort_names(home: Path) -> None:
    def edit(book: object) -> None:
        sheet = book.active  # type: ignore[attr-defined]
        rows = sorted(sheet.iter_rows(min_row=2, values_only=True))
        for i, row in enumerate(rows, 2):
            for j, value in enumerate(row, 1):
                sheet.cell(i, j).value = value

    _xlsx(home / DESKTOP / "scores.xlsx", edit)


def _docx(path: Path, edit: Callable[[object], None]) -> None:
    import docx

    doc = docx.Document(str(path))
    edit(doc)
    doc.save(str(path))


def writer_replace_word(home: Path) -> None:
    def edit(doc: object) -> None:
        for p in doc.paragraphs:  # type: ignore[attr-defined]
            for run in p.runs:
                run.text = run.text.replace("Monday", "Friday")

    _docx(home / DESKTOP / "meeting.docx", edit)


def writer_center_title(home: Path) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    def edit(doc: object) -> None:
        doc.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER  # type: ignore[attr-defined]

    _docx(home / DESKTOP / "notes_center.docx", edit)


def writer_font_serif(home: Path) -> None:
    def edit(doc: object) -> None:
        for p in doc.paragraphs:  # type: ignore[attr-defined]
            for run in p.runs:
                run.font.name = "Liberation Serif"

    _docx(home / DESKTOP / "notes_font.docx", edit)


def writer_strike_last(home: Path) -> None:
    def edit(doc: object) -> None:
        for run in doc.paragraphs[-1].runs:  # type: ignore[attr-defined]
            run.font.strike = True

    _docx(home / DESKTOP / "notes_strike.docx", edit)


def writer_page_break(home: Path) -> None:
    from docx.enum.text import WD_BREAK

    def edit(doc: object) -> None:
        # A run holding <w:br w:type="page"/> opens the last paragraph: what Writer saves
        # for Ctrl+Enter there.
        last = doc.paragraphs[-1]  # type: ignore[attr-defined]
        first = last.runs[0]._r
        brk = last.add_run()
        brk.add_break(WD_BREAK.PAGE)
        first.addprevious(brk._r)

    _docx(home / DESKTOP / "notes_break.docx", edit)


def _pptx(path: Path, edit: Callable[[object], None]) -> None:
    import pptx

    deck = pptx.Presentation(str(path))
    edit(deck)
    deck.save(str(path))


def impress_retitle(home: Path) -> None:
    def edit(deck: object) -> None:
        deck.slides[0].shapes.title.text = "Annual review"  # type: ignore[attr-defined]

    _pptx(home / DESKTOP / "review.pptx", edit)


def impress_add_slide(home: Path) -> None:
    def edit(deck: object) -> None:
        slide = deck.slides.add_slide(deck.slide_layouts[5])  # type: ignore[attr-defined]
        slide.shapes.title.text = "Questions"

    _pptx(home / DESKTOP / "review_end.pptx", edit)


def impress_delete_slide(home: Path) -> None:
    def edit(deck: object) -> None:
        ids = deck.slides._sldIdLst  # type: ignore[attr-defined]
        agenda = list(ids)[1]
        deck.part.drop_rel(agenda.rId)  # type: ignore[attr-defined]
        ids.remove(agenda)

    _pptx(home / DESKTOP / "review_short.pptx", edit)


def _png(path: Path, edit: Callable[[object], object]) -> None:
    from PIL import Image

    with Image.open(path) as im:
        out = edit(im.convert("RGB"))
    out.save(path)  # type: ignore[attr-defined]


def gimp_scale(home: Path) -> None:
    _png(home / DESKTOP / "photo_small.png", lambda im: im.resize((80, 60)))  # type: ignore[attr-defined]


def gimp_mirror(home: Path) -> None:
    from PIL import ImageOps

    _png(home / DESKTOP / "photo_flip.png", ImageOps.mirror)


def gimp_darken(home: Path) -> None:
    from PIL import ImageEnhance

    _png(home / DESKTOP / "photo_dark.png", lambda im: ImageEnhance.Brightness(im).enhance(0.6))


def _json_edit(path: Path, edit: Callable[[dict], None]) -> None:
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


CHROMIUM = Path(".config/chromium")


def chromium_bookmark_folder(home: Path) -> None:
    folder = {"children": [], "id": "5", "name": "Work", "type": "folder"}
    _json_edit(
        home / CHROMIUM / "Default/Bookmarks",
        lambda d: d["roots"]["bookmark_bar"]["children"].append(folder),
    )


def chromium_bookmark_url(home: Path) -> None:
    link = {"id": "5", "name": "Debian", "type": "url", "url": "https://www.debian.org/"}
    _json_edit(
        home / CHROMIUM / "Default/Bookmarks",
        lambda d: d["roots"]["bookmark_bar"]["children"].append(link),
    )


def chromium_startup_page(home: Path) -> None:
    def edit(prefs: dict) -> None:
        prefs["session"] = {"restore_on_startup": 4, "startup_urls": ["https://www.debian.org/"]}

    _json_edit(home / CHROMIUM / "Default/Preferences", edit)


def chromium_enable_flag(home: Path) -> None:
    def edit(state: dict) -> None:
        state["browser"]["enabled_labs_experiments"] = ["enable-parallel-downloading@1"]

    _json_edit(home / CHROMIUM / "Local State", edit)


VLCRC = Path(".config/vlc/vlcrc")


def _vlc_set(home: Path, key: str, value: str) -> None:
    path = home / VLCRC
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [f"{key}={value}" if line.startswith(f"#{key}=") else line for line in lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def vlc_global_play_pause(home: Path) -> None:
    _vlc_set(home, "global-key-play-pause", "Ctrl+Alt+p")


def vlc_recordings_folder(home: Path) -> None:
    _vlc_set(home, "input-record-path", str(home / "Recordings"))


def vlc_one_instance(home: Path) -> None:
    _vlc_set(home, "one-instance-when-started-from-file", "0")


PREFS_JS = Path(".thunderbird/deskscore.default/prefs.js")


def _tb_set(home: Path, name: str, value: str) -> None:
    path = home / PREFS_JS
    lines = [
        line for line in path.read_text(encoding="utf-8").splitlines() if f'"{name}"' not in line
    ]
    lines.append(f'user_pref("{name}", {value});')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def thunderbird_spellcheck_off(home: Path) -> None:
    _tb_set(home, "mail.spellcheck.inline", "false")


def thunderbird_start_page_off(home: Path) -> None:
    _tb_set(home, "mailnews.start_page.enabled", "false")


def thunderbird_mark_read_off(home: Path) -> None:
    _tb_set(home, "mailnews.mark_message_read.auto", "false")


def editor_fix_typo(home: Path) -> None:
    path = home / DESKTOP / "notes.txt"
    path.write_text(path.read_text(encoding="utf-8").replace("Teh", "The"), encoding="utf-8")


def editor_enable_debug(home: Path) -> None:
    path = home / DESKTOP / "settings.ini"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("debug = false", "debug = true"), encoding="utf-8")


def files_move_report(home: Path) -> None:
    (home / DESKTOP / "report.txt").rename(home / "Documents/Archive/report.txt")


def files_rename_picture(home: Path) -> None:
    (home / "Pictures/IMG_0001.png").rename(home / "Pictures/holiday.png")


def terminal_count_lines(home: Path) -> None:
    lines = (home / "data/log.txt").read_text(encoding="utf-8").count("\n")
    (home / "count.txt").write_text(f"{lines}\n", encoding="utf-8")


def terminal_archive(home: Path) -> None:
    with tarfile.open(home / "backup.tar.gz", "w:gz") as tar:
        tar.add(home / "data", arcname="data")


SOLUTIONS: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (
        calc_sum_formula,
        calc_average_formula,
        calc_fill_amounts,
        calc_rename_sheet,
        calc_sort_names,
        writer_replace_word,
        writer_center_title,
        writer_font_serif,
        writer_strike_last,
        writer_page_break,
        impress_retitle,
        impress_add_slide,
        impress_delete_slide,
        gimp_scale,
        gimp_mirror,
        gimp_darken,
        chromium_bookmark_folder,
        chromium_bookmark_url,
        chromium_startup_page,
        chromium_enable_flag,
        vlc_global_play_pause,
        vlc_recordings_folder,
        vlc_one_instance,
        thunderbird_spellcheck_off,
        thunderbird_start_page_off,
        thunderbird_mark_read_off,
        editor_fix_typo,
        editor_enable_debug,
        files_move_report,
        files_rename_picture,
        terminal_count_lines,
        terminal_archive,
    )
}
"""Task id -> the function that puts the desktop's files into the task's final state."""

__all__ = ["SOLUTIONS"]
