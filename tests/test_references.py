"""Every reference to a document points at a file and a heading that exist.

Comments, docstrings and documents cite the rules and the architecture by file and anchor
(`docs/rules/necromancers.md#turn-order`), so that whoever clones the repository can follow
them. This test reads the repository's text files and checks two kinds of reference:

- `docs/<path>.md`, `docs/<path>.md#<anchor>`, `deploy/README.md` and `README.md#<anchor>`,
  in any scanned file, read from the repository's root;
- relative Markdown links `[text](path#anchor)` in .md files, read from the file's folder
  (web and mail links are not checked).

The file must exist. An anchor must be the GitHub slug of one of that file's headings (with
GitHub's `-1`, `-2` suffixes for repeated headings), or an explicit `<a id="…">`. A failing
case is named after the file, the line and the reference.

It also checks that no file cites a document that is not in the repository: the old design
notes or the source texts' sections by number.
"""

import os
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = (
    "service",
    "web",
    "clients",
    "tests",
    "docs",
    "bench",
    "deploy",
    "README.md",
    "schema.sql",
)
# An applied migration is never edited: its comments cite the documents of its release, and
# schema.sql carries today's.
FROZEN = "service/store/migrations/"
TEXT_SUFFIXES = frozenset(
    {".py", ".md", ".toml", ".js", ".mjs", ".ts", ".html", ".yaml", ".sql", ".css"}
)
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
# Where nothing may cite a document that is not in the repository.
SELF_CONTAINED = ("service", "web", "clients", "tests", "docs")
# Built from parts, so that this file does not hold the words it looks for.
OUTSIDE_SPEC = re.compile(r"\b" + "DES" + "IGN" + r"\b")
SOURCE_SECTION = re.compile("seed" + r"\s*" + "\u00a7", re.IGNORECASE)

ROOT_REFERENCE = re.compile(
    r"(?<![\w./-])"
    r"(?P<path>docs/[\w./-]*?\.md|deploy/README\.md|README\.md(?=#))(?![\w])"
    r"(?:#(?P<anchor>[\w-]+))?"
)
MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+).*?\1")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(?P<text>.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _walk(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    found = []
    for folder, folders, files in os.walk(top):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS and f[0] != ".")
        found += [Path(folder, name) for name in sorted(files)]
    return found


@cache
def _files() -> dict[str, bytes]:
    """Every file under the scanned paths, by its path from the root, as bytes."""
    files = {}
    for name in SCANNED:
        for path in _walk(ROOT / name):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(FROZEN):
                files[relative] = path.read_bytes()
    return files


def _text(data: bytes) -> str | None:
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text_files() -> dict[str, str]:
    texts = {}
    for name, data in _files().items():
        text = _text(data) if Path(name).suffix in TEXT_SUFFIXES else None
        if text is not None:
            texts[name] = text
    return texts


def _outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of a Markdown text outside fenced code blocks."""
    lines = []
    fence = ""
    for number, line in enumerate(text.splitlines(), 1):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        lines.append((number, line))
    return lines


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: the rendered text lowercased, punctuation and symbols
    removed (letters, accented ones too, digits, `-` and `_` kept), each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]*>", "", text)
    kept = [c for c in text.strip().lower() if c in " -_" or unicodedata.category(c)[0] in "LNM"]
    return "".join(kept).replace(" ", "-")


def anchors_of(markdown: str) -> set[str]:
    """Every anchor a Markdown text defines: its headings' slugs and its explicit anchors."""
    anchors: set[str] = set()
    occurrences: dict[str, int] = {}

    def add(heading: str) -> None:
        # GitHub's rule for repeated slugs: the second `x` is `x-1`, the third `x-2`, and a
        # suffixed slug that is already taken moves on to the next number.
        slug = original = github_slug(heading)
        while slug in occurrences:
            occurrences[original] += 1
            slug = f"{original}-{occurrences[original]}"
        occurrences[slug] = 0
        anchors.add(slug)

    previous = ""
    for _, line in _outside_fences(markdown):
        anchors.update(HTML_ANCHOR.findall(line))
        heading = ATX_HEADING.match(line)
        if heading:
            add(heading.group("text") or "")
            previous = ""
            continue
        if SETEXT_UNDERLINE.match(line) and previous.strip() and previous.lstrip()[0] not in "|-*>":
            add(previous)
        previous = line
    return anchors


@cache
def _anchors(path: str) -> set[str]:
    return anchors_of((ROOT / path).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Reference:
    source: str
    line: int
    written: str
    target: str  # the file it points at, from the root (may climb out of it with "..")
    anchor: str | None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.written}"


def _references() -> list[Reference]:
    found = []
    for name, text in _text_files().items():
        for number, line in enumerate(text.splitlines(), 1):
            for match in ROOT_REFERENCE.finditer(line):
                found.append(
                    Reference(name, number, match.group(0), match["path"], match["anchor"])
                )
        if not name.endswith(".md"):
            continue
        folder = Path(name).parent
        for number, line in _outside_fences(text):
            for match in MARKDOWN_LINK.finditer(CODE_SPAN.sub("", line)):
                written = match["target"].strip("<>")
                if SCHEME.match(written):
                    continue
                path, _, anchor = written.partition("#")
                target = (folder / unquote(path)).as_posix() if path else name
                found.append(Reference(name, number, written, target, anchor or None))
    return found


REFERENCES = _references()


def test_references_are_found() -> None:
    """The scan itself works: it sees the references this repository is known to hold."""
    written = {(r.source, r.written) for r in REFERENCES}
    assert ("docs/rules/necromancers.md", "#faces") in written
    assert any(r.target == "docs/architecture.md" and r.anchor for r in REFERENCES)


@pytest.mark.parametrize("reference", REFERENCES, ids=str)
def test_reference_points_at_an_existing_file_and_heading(reference: Reference) -> None:
    path = ROOT / reference.target
    inside = path.resolve().is_relative_to(ROOT)
    assert inside and path.exists(), f"{reference}: no file {reference.target}"
    if reference.anchor is None or path.suffix != ".md" or path.is_dir():
        return
    target = path.resolve().relative_to(ROOT).as_posix()
    assert reference.anchor in _anchors(target), (
        f"{reference}: {target} has no heading with the anchor #{reference.anchor}"
    )


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Seeds and determinism", "seeds-and-determinism"),
        (
            "Runs: the shop, pairing and the battle seed",
            "runs-the-shop-pairing-and-the-battle-seed",
        ),
        ("A run: lives, wins and rounds", "a-run-lives-wins-and-rounds"),
        ("5. Comenzando a jugar (setup)", "5-comenzando-a-jugar-setup"),
        ("The cards (ours, but Reednor)", "the-cards-ours-but-reednor"),
        ("`[shop]` and `max_level`", "shop-and-max_level"),
        ("Exploración — duel mode", "exploración--duel-mode"),
        ("[Where](other.md) the seed is silent", "where-the-seed-is-silent"),
    ],
)
def test_github_slug(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_repeated_headings_and_explicit_anchors() -> None:
    text = (
        "# Rules\n## Setup\n## Setup\n```\n## Setup\n```\n## Setup 1\n## Setup\n"
        '<a id="kept-anchor"></a>\nTitle\n=====\n'
    )
    assert anchors_of(text) == {
        "rules",
        "setup",
        "setup-1",
        "setup-1-1",
        "setup-2",
        "kept-anchor",
        "title",
    }


@pytest.mark.parametrize("folder", SELF_CONTAINED)
def test_nothing_cites_a_document_outside_the_repository(folder: str) -> None:
    cited = []
    for name, data in _files().items():
        text = _text(data)
        if not name.startswith(folder + "/") or text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_SPEC.search(line) or SOURCE_SECTION.search(line):
                cited.append(f"{name}:{number}: {line.strip()}")
    assert not cited, "cite docs/architecture.md or docs/rules/ instead:\n" + "\n".join(cited)
