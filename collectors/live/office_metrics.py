"""Evaluators for the desktop applications' files: spreadsheets, documents, slides, images,
Chromium's profile, VLC's vlcrc and Thunderbird's prefs.js.

Metric names, arguments and meanings follow OSWorld's `desktop_env/evaluators/metrics`
where OSWorld has one; the code is this project's. Metrics named in `PATH_METRICS` take
local paths, as OSWorld's `vm_file` getter hands them: `evaluators.get_state` then copies
the desktop's file into a scratch folder and passes its path (None when the file is absent,
which scores 0). The file libraries (openpyxl, python-docx, python-pptx: the `desktops`
extra; Pillow) are imported inside the functions, so importing this module stays light.

Getters added here (`GETTERS`): `bookmarks`, `enabled_experiments`, `default_search_engine`
(Chromium's profile, as OSWorld's getters of those names), `vlc_config` (a local copy of
vlcrc) and `generated_file` (a gold file this project generates, where OSWorld downloads
one with `cloud_file`).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

CHROMIUM_PROFILE = "~/.config/chromium"
"""Where Debian's chromium keeps its profiles ("Local State" here, Default/ below)."""
VLCRC = "~/.config/vlc/vlcrc"

# --------------------------------------------------------------------------- value rules


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except (TypeError, ValueError):
        return None


def match_value(value: Any, rule: Mapping[str, Any]) -> bool:
    """One `{method, ref}` rule, as OSWorld's `_match_value_to_rule`: eq, ne, re,
    approx:EPS, lt, le, gt, ge, str_eq_ignore_case."""
    method = str(rule.get("method", "eq"))
    ref = rule.get("ref")
    if method == "eq":
        if isinstance(value, bool) or isinstance(ref, bool):
            return value is ref  # false is not 0 in a prefs file or a cell
        return bool(value == ref)
    if method == "ne":
        return value != ref
    if method == "re":
        return value is not None and re.search(str(ref), str(value)) is not None
    if method == "str_eq_ignore_case":
        return value is not None and str(value).lower() == str(ref).lower()
    a, b = _number(value), _number(ref)
    if a is None or b is None:
        return False
    if method.startswith("approx:"):
        return abs(a - b) <= float(method.split(":", 1)[1])
    ops: dict[str, Callable[[float, float], bool]] = {
        "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y,
        "gt": lambda x, y: x > y,
        "ge": lambda x, y: x >= y,
    }
    if method not in ops:
        raise ValueError(f"unknown match method {method!r}")
    return ops[method](a, b)


# --------------------------------------------------------------------------- spreadsheets


def _sheet(book: Any, index: Any) -> Any:
    """A sheet by OSWorld's index forms: 0, "RI0"/"EI0" (by position) or "RNName" (by name)."""
    if isinstance(index, int):
        return book.worksheets[index]
    text = str(index)
    if text[:2] in ("RI", "EI"):
        return book.worksheets[int(text[2:])]
    if text[:2] in ("RN", "EN"):
        return book[text[2:]]
    return book[text]


def _cell_equal(a: Any, b: Any) -> bool:
    if a in (None, "") and b in (None, ""):
        return True
    x, y = _number(a), _number(b)
    if x is not None and y is not None and not isinstance(a, str) and not isinstance(b, str):
        return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _sheet_values(sheet: Any) -> list[list[Any]]:
    rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    while rows and all(v in (None, "") for v in rows[-1]):
        rows.pop()
    return rows


def _same_values(a: Any, b: Any) -> bool:
    ra, rb = _sheet_values(a), _sheet_values(b)
    if len(ra) != len(rb):
        return False
    for x, y in zip(ra, rb, strict=True):
        width = max(len(x), len(y))
        x, y = x + [None] * (width - len(x)), y + [None] * (width - len(y))
        if not all(_cell_equal(p, q) for p, q in zip(x, y, strict=True)):
            return False
    return True


def normalise_formula(formula: Any) -> str:
    """A formula as text to compare: no blanks, upper case, with its leading '='."""
    text = "".join(str(formula).split()).upper()
    return text if text.startswith("=") else "=" + text


def compare_table(result: str | None, expected: str | None = None, **options: Any) -> float:
    """OSWorld's compare_table, the rules `sheet_name` (the same sheet names as expected's),
    `sheet_data` (sheet_idx0 of result holds the values of sheet_idx1 of expected) and
    `check_cell` (a cell's `value` and, a deskscore addition, its `formula` text match
    `{method, ref}` rules). 1 when every rule holds."""
    rules = options.get("rules")
    if not rules:
        raise ValueError("compare_table needs its rules")
    if result is None:
        return 0.0
    import openpyxl

    try:
        values = openpyxl.load_workbook(result, data_only=True)
        formulas = openpyxl.load_workbook(result, data_only=False)
    except Exception:
        return 0.0
    try:
        gold = openpyxl.load_workbook(expected, data_only=True) if expected else None
    except Exception as e:
        raise ValueError(f"the expected workbook cannot be read: {e}") from None
    for rule in rules:
        kind = rule.get("type")
        if kind == "sheet_name":
            if gold is None or values.sheetnames != gold.sheetnames:
                return 0.0
        elif kind == "sheet_data":
            if gold is None:
                return 0.0
            try:
                a = _sheet(values, rule.get("sheet_idx0", 0))
                b = _sheet(gold, rule.get("sheet_idx1", 0))
            except (KeyError, IndexError):
                return 0.0
            if not _same_values(a, b):
                return 0.0
        elif kind == "check_cell":
            try:
                index = rule.get("sheet_idx", 0)
                cell_v = _sheet(values, index)[rule["coordinate"]]
                cell_f = _sheet(formulas, index)[rule["coordinate"]]
            except (KeyError, IndexError):
                return 0.0
            for prop, prop_rule in rule.get("props", {}).items():
                if prop == "value":
                    ok = match_value(cell_v.value, prop_rule)
                elif prop == "formula":
                    text = cell_f.value
                    ok = isinstance(text, str) and text.startswith("=")
                    ok = ok and match_value(
                        normalise_formula(text),
                        {**prop_rule, "ref": normalise_formula(prop_rule["ref"])},
                    )
                elif prop == "bold":
                    ok = match_value(bool(cell_f.font.b), prop_rule)
                else:
                    raise ValueError(f"check_cell property {prop!r}")
                if not ok:
                    return 0.0
        else:
            raise ValueError(f"compare_table rule {kind!r}")
    return 1.0


# --------------------------------------------------------------------------- documents


def _docx(path: str | None) -> Any:
    if path is None:
        return None
    import docx

    try:
        return docx.Document(path)
    except Exception:
        return None


def compare_docx_files(file1: str | None, file2: str | None, **options: Any) -> float:
    """OSWorld's compare_docx_files on the paragraphs' text: equal (by default with every run of
    blanks, line ends included, read as one space; `ignore_case` too) -> 1, else 0."""
    a, b = _docx(file1), _docx(file2)
    if a is None or b is None:
        return 0.0
    ta = [p.text for p in a.paragraphs]
    tb = [p.text for p in b.paragraphs]
    if options.get("ignore_blanks", True):
        x = re.sub(r"\s+", " ", "\n".join(ta)).strip()
        y = re.sub(r"\s+", " ", "\n".join(tb)).strip()
    else:
        x, y = "\n".join(t.rstrip() for t in ta).strip(), "\n".join(t.rstrip() for t in tb).strip()
    if options.get("ignore_case", False):
        x, y = x.lower(), y.lower()
    return float(x == y)


def compare_font_names(docx_file: str | None, rules: Mapping[str, Any], **_: Any) -> float:
    """OSWorld's compare_font_names: every run of every paragraph is set in
    rules["font_name"]."""
    doc = _docx(docx_file)
    if doc is None:
        return 0.0
    runs = [r for p in doc.paragraphs for r in p.runs]
    return float(all(r.font.name == rules["font_name"] for r in runs))


def is_first_line_centered(docx_file: str | None, **_: Any) -> float:
    """OSWorld's is_first_line_centered: the first paragraph is centred."""
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    doc = _docx(docx_file)
    if doc is None or not doc.paragraphs:
        return 0.0
    return float(doc.paragraphs[0].alignment == WD_ALIGN_PARAGRAPH.CENTER)


def _page_breaks(doc: Any) -> int:
    """Page breaks in the paragraphs' runs (`<w:br w:type="page"/>`, which Writer saves for
    Ctrl+Enter), as OSWorld counts them; a paragraph's "page break before" is not one."""
    from docx.oxml.ns import qn

    return sum(
        br.get(qn("w:type")) == "page"
        for p in doc.paragraphs
        for r in p.runs
        for br in r._r.iter(qn("w:br"))
    )


def contains_page_break(docx_file: str | None, rules: Mapping[str, Any] | None = None) -> float:
    """OSWorld's contains_page_break: the document holds a page break (exactly
    rules["page_break_count"] of them when given)."""
    doc = _docx(docx_file)
    if doc is None:
        return 0.0
    n = _page_breaks(doc)
    want = (rules or {}).get("page_break_count")
    return float(n == int(want) if want is not None else n > 0)


def evaluate_strike_through_last_paragraph(file1: str | None, file2: str | None) -> float:
    """OSWorld's evaluate_strike_through_last_paragraph: the text is that of file2 and
    every run of the last paragraph is struck through."""
    a, b = _docx(file1), _docx(file2)
    if a is None or b is None:
        return 0.0
    if compare_docx_files(file1, file2) != 1.0 or not a.paragraphs:
        return 0.0
    return float(all(r.font.strike for r in a.paragraphs[-1].runs))


# --------------------------------------------------------------------------- slides


def _slide_texts(path: str | None) -> list[list[str]] | None:
    if path is None:
        return None
    import pptx

    try:
        deck = pptx.Presentation(path)
    except Exception:
        return None
    return [
        [
            s.text_frame.text.strip()
            for s in slide.shapes
            if s.has_text_frame and s.text_frame.text.strip()
        ]
        for slide in deck.slides
    ]


def compare_pptx_files(file1: str | None, file2: str | None, **options: Any) -> float:
    """OSWorld's compare_pptx_files, its text part: the same number of slides and, slide by
    slide, the same non-empty shape texts in order (`examine_text`, default true)."""
    a, b = _slide_texts(file1), _slide_texts(file2)
    if a is None or b is None or len(a) != len(b):
        return 0.0
    if not options.get("examine_text", True):
        return 1.0
    return float(a == b)


# --------------------------------------------------------------------------- images


def _image(path: str | None) -> Any:
    if path is None:
        return None
    from PIL import Image

    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except Exception:
        return None


def _similarity(a: Any, b: Any) -> float:
    """1 - mean absolute pixel difference / 255 (0 when the sizes differ)."""
    import numpy as np

    if a.size != b.size:
        return 0.0
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    return 1.0 - float(np.abs(x - y).mean()) / 255.0


def _structure(a: Any, b: Any) -> float:
    """Correlation of the two images' grey levels: 1 for the same picture whatever its
    brightness (deskscore's measure where OSWorld uses SSIM)."""
    import numpy as np

    if a.size != b.size:
        return 0.0
    x = np.asarray(a.convert("L"), dtype=np.float64).ravel()
    y = np.asarray(b.convert("L"), dtype=np.float64).ravel()
    if x.std() == 0 or y.std() == 0:
        return float(x.std() == y.std())
    return float(np.corrcoef(x, y)[0, 1])


def compare_images(image1: str | None, image2: str | None, **options: Any) -> float:
    """OSWorld's compare_images: 1 when the pictures are the same size and at least
    `similarity_threshold` alike (default 0.99; see _similarity)."""
    a, b = _image(image1), _image(image2)
    if a is None or b is None:
        return 0.0
    return float(_similarity(a, b) >= float(options.get("similarity_threshold", 0.99)))


def check_image_size(src_path: str | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's check_image_size: the image's height and width are rule's (each optional)."""
    im = _image(src_path)
    if im is None:
        return 0.0
    w, h = im.size
    return float(rule.get("width", w) == w and rule.get("height", h) == h)


def check_image_mirror(src_path: str | None, tgt_path: str | None) -> float:
    """OSWorld's check_image_mirror: src is tgt flipped left to right."""
    from PIL import ImageOps

    a, b = _image(src_path), _image(tgt_path)
    if a is None or b is None:
        return 0.0
    return float(_similarity(a, ImageOps.mirror(b)) >= 0.99)


def check_brightness_decrease_and_structure_sim(
    src_path: str | None, tgt_path: str | None, threshold: float = 0.9
) -> float:
    """OSWorld's metric of that name: src is darker than tgt and shows the same picture."""
    import numpy as np

    a, b = _image(src_path), _image(tgt_path)
    if a is None or b is None or a.size != b.size:
        return 0.0
    darker = np.asarray(a.convert("L")).mean() < np.asarray(b.convert("L")).mean()
    return float(bool(darker) and _structure(a, b) >= threshold)


# --------------------------------------------------------------------------- Chromium


def is_expected_bookmarks(bookmarks: Mapping[str, Any] | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's is_expected_bookmarks: the bookmark bar's folder names
    (`bookmark_bar_folders_names`: rule["names"]) or its links' URLs
    (`bookmark_bar_websites_urls`: rule["urls"]) are exactly those given, as sets."""
    if not bookmarks:
        return 0.0
    children = (bookmarks.get("bookmark_bar") or {}).get("children") or []
    kind = rule.get("type")
    if kind == "bookmark_bar_folders_names":
        names = [c.get("name") for c in children if c.get("type") == "folder"]
        return float(set(names) == set(rule["names"]))
    if kind == "bookmark_bar_websites_urls":
        urls = [c.get("url") for c in children if c.get("type") == "url"]
        return float(set(urls) == set(rule["urls"]))
    raise ValueError(f"is_expected_bookmarks rule {kind!r}")


def check_enabled_experiments(enabled: list[str] | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's check_enabled_experiments (type "names"): the enabled chrome://flags
    entries are exactly rule["names"], in any order. Entries compare whole ("name@1" is
    Enabled, "name@2" Disabled), where OSWorld's drops the "@N" and so passes a disabled flag."""
    if rule.get("type") != "names":
        raise ValueError(f"check_enabled_experiments rule {rule.get('type')!r}")
    return float(sorted(enabled or []) == sorted(rule["names"]))


def _dig(data: Any, keys: list[Any]) -> tuple[bool, Any]:
    for key in keys:
        in_map = isinstance(data, Mapping) and key in data
        in_list = isinstance(data, list) and isinstance(key, int) and -len(data) <= key < len(data)
        if in_map or in_list:
            data = data[key]
        else:
            return False, None
    return True, data


def check_json(result: str | None, rules: Mapping[str, Any], **_: Any) -> float:
    """OSWorld's check_json: in the JSON file, every `expect` entry ({key: [path], method,
    ref}) is present and matches, and no `unexpect` entry matches."""
    if result is None:
        return 0.0
    try:
        with open(result, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return 0.0
    for item in rules.get("expect", []):
        found, value = _dig(data, list(item["key"]))
        if not found or not match_value(value, item):
            return 0.0
    for item in rules.get("unexpect", []):
        found, value = _dig(data, list(item["key"]))
        if found and match_value(value, item):
            return 0.0
    return 1.0


# --------------------------------------------------------------------------- VLC


def _lines(path: str | None) -> list[str] | None:
    """The lines of a settings file the application left (None: no path, or unreadable)."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return None


def read_vlcrc(path: str | None) -> dict[str, str] | None:
    """vlcrc's set options (commented lines are VLC's defaults and are left out)."""
    lines = _lines(path)
    if lines is None:
        return None
    out: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith(("#", "[")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def check_global_key_play_pause(actual_config_path: str | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's metric: whether vlcrc binds a global Play/Pause hotkey (1: a key is set on
    global-key-play-pause; 0: none, the option commented out or empty) is the rule's."""
    options = read_vlcrc(actual_config_path)
    if options is None:
        return 0.0
    bound = int(options.get("global-key-play-pause", "") not in ("", "0"))
    return float(bound == int(rule["expected_global_key_play_pause"]))


def check_one_instance_when_started_from_file(
    actual_config_path: str | None, rule: Mapping[str, Any]
) -> float:
    """OSWorld's metric: vlcrc's one-instance-when-started-from-file (VLC's default 1 when
    unset) is the rule's value."""
    options = read_vlcrc(actual_config_path)
    if options is None:
        return 0.0
    value = options.get("one-instance-when-started-from-file", "1")
    return float(value == str(rule["expected_one_instance_when_started_from_file"]))


def _same_folder(value: str, want: str) -> bool:
    value, want = value.rstrip("/"), want.rstrip("/")
    if want.startswith("~/"):
        # The rule names the folder under the user's home, wherever that is on the desktop.
        return value == want or (value.startswith("/") and value.endswith("/" + want[2:]))
    return os.path.normpath(value) == os.path.normpath(want)


def is_vlc_recordings_folder(actual_config_path: str | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's is_vlc_recordings_folder: vlcrc's input-record-path is
    rule["recording_file_path"] (a "~/" path matches that folder under any home, as the
    desktop user's home differs between providers; OSWorld's compares the text)."""
    options = read_vlcrc(actual_config_path)
    if options is None or "input-record-path" not in options:
        return 0.0
    return float(_same_folder(options["input-record-path"], rule["recording_file_path"]))


# --------------------------------------------------------------------------- Thunderbird

_PREF = re.compile(r'^\s*user_pref\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*(.*)\)\s*;\s*$')


def read_prefs_js(path: str | None) -> dict[str, Any] | None:
    """A prefs.js / user.js file's `user_pref("name", value);` lines as a dict."""
    lines = _lines(path)
    if lines is None:
        return None
    prefs: dict[str, Any] = {}
    for line in lines:
        m = _PREF.match(line)
        if not m:
            continue
        try:
            prefs[json.loads(f'"{m.group(1)}"')] = json.loads(m.group(2))
        except ValueError:
            prefs[m.group(1)] = m.group(2).strip()
    return prefs


def check_thunderbird_prefs(result: str | None, rule: Mapping[str, Any]) -> float:
    """OSWorld's check_thunderbird_prefs: every `expect` pref ({name: {method, ref}}) is set
    and matches; no `unexpect` pref matches."""
    prefs = read_prefs_js(result)
    if prefs is None:
        return 0.0
    for name, want in (rule.get("expect") or {}).items():
        if name not in prefs or not match_value(prefs[name], want):
            return 0.0
    for name, avoid in (rule.get("unexpect") or {}).items():
        if name in prefs and match_value(prefs[name], avoid):
            return 0.0
    return 1.0


# --------------------------------------------------------------------------- registry

METRICS: dict[str, Callable[..., float]] = {
    f.__name__: f
    for f in (
        compare_table,
        compare_docx_files,
        compare_font_names,
        is_first_line_centered,
        contains_page_break,
        evaluate_strike_through_last_paragraph,
        compare_pptx_files,
        compare_images,
        check_image_size,
        check_image_mirror,
        check_brightness_decrease_and_structure_sim,
        is_expected_bookmarks,
        check_enabled_experiments,
        check_json,
        check_global_key_play_pause,
        check_one_instance_when_started_from_file,
        is_vlc_recordings_folder,
        check_thunderbird_prefs,
    )
}

PATH_METRICS: frozenset[str] = frozenset(METRICS) - {
    "is_expected_bookmarks",
    "check_enabled_experiments",
}
"""Metrics whose file arguments are local paths (OSWorld's vm_file hands over a copy)."""


# --------------------------------------------------------------------------- getters


def _json_file(controller: Any, path: str) -> Any:
    data = controller.file(path)
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError:
        return None


def _profile(config: Mapping[str, Any]) -> str:
    return str(config.get("profile_dir", CHROMIUM_PROFILE)).rstrip("/")


def get_bookmarks(controller: Any, config: Mapping[str, Any], **_: Any) -> Any:
    """Chromium's bookmark roots (Default/Bookmarks' "roots"); None when there are none."""
    data = _json_file(controller, _profile(config) + "/Default/Bookmarks")
    return data.get("roots") if isinstance(data, Mapping) else None


def get_enabled_experiments(controller: Any, config: Mapping[str, Any], **_: Any) -> Any:
    """The chrome://flags entries enabled in "Local State" ([] when none)."""
    data = _json_file(controller, _profile(config) + "/Local State")
    found, value = _dig(data, ["browser", "enabled_labs_experiments"])
    return list(value) if found and isinstance(value, list) else []


def get_default_search_engine(controller: Any, config: Mapping[str, Any], **_: Any) -> Any:
    """The default search engine's name in Default/Preferences ("Google" when unset, as
    OSWorld's getter answers)."""
    data = _json_file(controller, _profile(config) + "/Default/Preferences")
    found, value = _dig(data, ["default_search_provider_data", "template_url_data", "short_name"])
    return value if found else "Google"


def _local_copy(data: bytes | None, workdir: str, name: str) -> str | None:
    if data is None:
        return None
    fd, path = tempfile.mkstemp(dir=workdir, suffix="-" + os.path.basename(name))
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def get_vlc_config(controller: Any, config: Mapping[str, Any], *, workdir: str, **_: Any) -> Any:
    """A local copy of VLC's vlcrc (None when VLC saved none)."""
    path = str(config.get("path", VLCRC))
    return _local_copy(controller.file(path), workdir, "vlcrc")


def get_generated_file(
    controller: Any, config: Mapping[str, Any], *, workdir: str, as_path: bool = False, **_: Any
) -> Any:
    """A gold file generated by this project (desktop_files.build): a local path for the
    metrics that read files, else its text."""
    from deskscore.collectors.live import desktop_files

    data = desktop_files.build(str(config["name"]))
    if as_path:
        return _local_copy(data, workdir, str(config["name"]))
    return data.decode("utf-8", "replace")


GETTERS: dict[str, Callable[..., Any]] = {
    "bookmarks": get_bookmarks,
    "enabled_experiments": get_enabled_experiments,
    "default_search_engine": get_default_search_engine,
    "vlc_config": get_vlc_config,
    "generated_file": get_generated_file,
}


__all__ = ["GETTERS", "METRICS", "PATH_METRICS", "match_value", "normalise_formula"]
