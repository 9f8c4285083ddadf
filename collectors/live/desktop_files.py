"""The files the desktop tasks start from, and their gold files, generated here.

`build(name)` gives a file's bytes: spreadsheets (openpyxl), documents (python-docx),
slides (python-pptx), pictures (Pillow) and the applications' profile files (Chromium,
VLC, Thunderbird), always the same bytes for the same name (fixed zip dates and document
properties), so no task needs a download. The task configs name them in `upload_file`
steps as `{"generated": NAME, "path": DESKTOP_PATH}`, and the `generated_file` getter gives
the gold ones to the evaluators.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable

FIXED_DATE = (2026, 1, 1, 0, 0, 0)
_W3CDTF = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?")

SALES = [("Q1", 1200), ("Q2", 950), ("Q3", 1430), ("Q4", 1100)]
PRICES = [("Pens", 1.5, 40), ("Paper", 4.25, 12), ("Folders", 2.0, 25), ("Tape", 3.1, 8)]
BUDGET = [("Rent", 900), ("Food", 350), ("Travel", 120), ("Books", 60)]
SCORES = [("Mira", 71), ("Anton", 88), ("Lena", 64), ("Jonas", 93), ("Clara", 79)]
LETTER = [
    "Meeting notes",
    "The meeting is on Monday at ten in room 4.",
    "Please bring the quarterly report and your questions.",
    "Lunch will be served after the meeting.",
]
LETTER_FONT = "DejaVu Sans"
TALK = [
    ("Quarterly review", ["Sales team"]),
    ("Agenda", ["Results", "Plans", "Questions"]),
    ("Next steps", ["Hire two people", "Open the Lyon office"]),
]
NOTES = "Teh quick brown fox jumps over the lazy dog.\nIt was a sunny day.\n"
LOG_LINES = 37


def _fixed_zip(data: bytes) -> bytes:
    """The same archive with fixed entry dates and document timestamps."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _W3CDTF.sub(b"2026-01-01T00:00:00Z", body)
            entry = zipfile.ZipInfo(info.filename, FIXED_DATE)
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, body)
    return out.getvalue()


def _save(doc: object) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)  # type: ignore[attr-defined]
    return _fixed_zip(buf.getvalue())


# --------------------------------------------------------------------------- spreadsheets


def _workbook(header: list[str], rows: list[tuple[object, ...]], title: str = "Sheet1") -> object:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = title
    sheet.append(header)
    for row in rows:
        sheet.append(list(row))
    return book


def sales_xlsx() -> bytes:
    book = _workbook(["Quarter", "Sales"], [*SALES, ("Total", None)])
    return _save(book)


def prices_xlsx(filled: bool = False) -> bytes:
    rows = [(n, p, q, round(p * q, 2) if filled else None) for n, p, q in PRICES]
    return _save(_workbook(["Item", "Price", "Qty", "Amount"], rows))


def budget_xlsx(title: str = "Sheet1") -> bytes:
    return _save(_workbook(["Item", "Monthly"], BUDGET, title))


def scores_xlsx(ordered: bool = False) -> bytes:
    rows = sorted(SCORES) if ordered else SCORES
    return _save(_workbook(["Name", "Score"], rows))


# --------------------------------------------------------------------------- documents


def letter_docx(paragraphs: list[str] | None = None) -> bytes:
    import docx

    doc = docx.Document()
    for text in paragraphs or LETTER:
        run = doc.add_paragraph().add_run(text)
        run.font.name = LETTER_FONT
    return _save(doc)


# --------------------------------------------------------------------------- slides


def talk_pptx(slides: list[tuple[str, list[str]]] | None = None) -> bytes:
    import pptx

    deck = pptx.Presentation()
    for i, (title, lines) in enumerate(slides or TALK):
        layout = deck.slide_layouts[0 if i == 0 else (1 if lines else 5)]
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text = title
        if lines:
            slide.placeholders[1].text_frame.text = "\n".join(lines)
    return _save(deck)


# --------------------------------------------------------------------------- pictures


def photo_png() -> bytes:
    """A 160x120 picture: a sky gradient, a sun and a house (no two halves alike, so a
    mirror image differs from it)."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (160, 120))
    draw = ImageDraw.Draw(im)
    for y in range(120):
        draw.line([(0, y), (159, y)], fill=(90 + y, 150 + y // 2, 230))
    draw.ellipse([120, 10, 150, 40], fill=(250, 210, 60))
    draw.rectangle([20, 60, 70, 110], fill=(170, 60, 50))
    draw.polygon([(15, 60), (45, 35), (75, 60)], fill=(110, 40, 30))
    draw.rectangle([0, 110, 159, 119], fill=(60, 140, 60))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


# --------------------------------------------------------------------------- profiles


def chromium_bookmarks() -> bytes:
    def root(name: str, ident: str) -> dict[str, object]:
        return {"children": [], "id": ident, "name": name, "type": "folder"}

    roots = {
        "bookmark_bar": root("Bookmarks bar", "1"),
        "other": root("Other bookmarks", "2"),
        "synced": root("Mobile bookmarks", "3"),
    }
    return json.dumps({"roots": roots, "version": 1}, indent=3).encode()


def chromium_preferences() -> bytes:
    prefs = {
        "browser": {"has_seen_welcome_page": True},
        "session": {"restore_on_startup": 5},
    }
    return json.dumps(prefs).encode()


def chromium_local_state() -> bytes:
    return json.dumps({"browser": {"enabled_labs_experiments": []}}).encode()


def vlcrc() -> bytes:
    """VLC's settings file as VLC writes it before any change: the options at their
    defaults, commented out."""
    lines = [
        "###",
        "###  vlc 3.0",
        "###",
        "[qt] # Qt interface",
        "#qt-privacy-ask=0",
        "[core] # core program",
        "# Record directory or filename (string)",
        "#input-record-path=",
        "# Use only one instance when started from file manager (boolean)",
        "#one-instance-when-started-from-file=1",
        "# Play/Pause (string)",
        "#global-key-play-pause=",
        "#key-play-pause=Space",
    ]
    return ("\n".join(lines) + "\n").encode()


def thunderbird_profiles_ini() -> bytes:
    text = (
        "[General]\nStartWithLastProfile=1\nVersion=2\n\n"
        "[Profile0]\nName=default\nIsRelative=1\nPath=deskscore.default\nDefault=1\n"
    )
    return text.encode()


def thunderbird_prefs_js() -> bytes:
    lines = [
        "// Mozilla User Preferences",
        'user_pref("mail.shell.checkDefaultClient", false);',
        'user_pref("mail.spellcheck.inline", true);',
        'user_pref("mailnews.start_page.enabled", true);',
        'user_pref("mailnews.mark_message_read.auto", true);',
    ]
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------- text files


def notes_txt(fixed: bool = False) -> bytes:
    return (NOTES.replace("Teh", "The") if fixed else NOTES).encode()


def settings_ini() -> bytes:
    return b"[app]\nname = ledger\ndebug = false\n\n[ui]\ntheme = light\n"


def log_txt() -> bytes:
    return "".join(f"2026-01-01 12:{i:02d}:00 event {i}\n" for i in range(LOG_LINES)).encode()


def report_txt() -> bytes:
    return b"Quarterly report: all figures are final.\n"


FILES: dict[str, Callable[[], bytes]] = {
    "sales.xlsx": sales_xlsx,
    "prices.xlsx": prices_xlsx,
    "prices_gold.xlsx": lambda: prices_xlsx(filled=True),
    "budget.xlsx": budget_xlsx,
    "budget_gold.xlsx": lambda: budget_xlsx("Budget 2026"),
    "scores.xlsx": scores_xlsx,
    "scores_gold.xlsx": lambda: scores_xlsx(ordered=True),
    "letter.docx": letter_docx,
    "letter_gold_friday.docx": lambda: letter_docx([p.replace("Monday", "Friday") for p in LETTER]),
    "talk.pptx": talk_pptx,
    "talk_gold_annual.pptx": lambda: talk_pptx([("Annual review", TALK[0][1]), *TALK[1:]]),
    "talk_gold_questions.pptx": lambda: talk_pptx([*TALK, ("Questions", [])]),
    "talk_gold_no_agenda.pptx": lambda: talk_pptx([TALK[0], TALK[2]]),
    "photo.png": photo_png,
    "chromium/Bookmarks": chromium_bookmarks,
    "chromium/Preferences": chromium_preferences,
    "chromium/Local State": chromium_local_state,
    "vlcrc": vlcrc,
    "thunderbird/profiles.ini": thunderbird_profiles_ini,
    "thunderbird/prefs.js": thunderbird_prefs_js,
    "notes.txt": notes_txt,
    "notes_gold.txt": lambda: notes_txt(fixed=True),
    "settings.ini": settings_ini,
    "log.txt": log_txt,
    "report.txt": report_txt,
}
"""Every file a desktop task starts from or is compared with, by name."""


def build(name: str) -> bytes:
    """The bytes of the generated file `name` (KeyError naming the known ones otherwise)."""
    try:
        maker = FILES[name]
    except KeyError:
        raise KeyError(f"no generated file {name!r} (known: {', '.join(sorted(FILES))})") from None
    return maker()


__all__ = ["FILES", "build"]
