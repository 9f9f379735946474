"""The hand-written sections of bellkeys.1 and the map page, from Markdown."""

import os

from . import CHECKOUT, PROGRAM, Failure
from .blocks import parse_blocks, render_blocks
from .commands import see_also_line, title_header
from .inline import Source, parse_inline, plain_inline
from .roff import escape_chars


def read_markdown(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as error:
        raise Failure("%s: cannot read: %s" % (path, error.strerror))
    except UnicodeDecodeError as error:
        raise Failure("%s: not UTF-8: %s" % (path, error))
    return [(k + 1, line.rstrip("\n").rstrip("\r")) for k, line in enumerate(text.split("\n"))]


def extra_sections(path):
    """The hand-written sections: [(TITLE, roff lines)], in the file's order (## headings only)."""
    blocks = parse_blocks(read_markdown(path), path)
    sections = []
    for block in blocks:
        if block[0] == "heading":
            if block[1] != 2:
                block[3].fail("the hand-written sections are ## headings (and ### within them)")
            sections.append((plain_inline(parse_inline(block[2], block[3])).upper(), []))
            continue
        if not sections:
            where = block[-1]
            where.fail("text before the first ## heading")
        render_blocks([block], sections[-1][1], {3: "SS"})
    return sections


def map_markdown():
    """docs/map.md's lines."""
    path = os.path.join(CHECKOUT, "docs", "map.md")
    if not os.path.exists(path):
        raise Failure("docs/map.md is missing: bellkeys-map(5) is made from it")
    return path, read_markdown(path)


def map_page(date, version, command_pages):
    path, lines = map_markdown()
    blocks = parse_blocks(lines, path)
    if not blocks or blocks[0][0] != "heading" or blocks[0][1] != 1:
        where = blocks[0][-1] if blocks else Source(path, 1)
        where.fail("the map page must start with a # heading")
    name = PROGRAM + "-map"
    out = title_header(name, 5, date, version, "File Formats", os.path.relpath(path, CHECKOUT))
    out += [".SH NAME", r"%s \- the map file of %s" % (escape_chars(name), PROGRAM)]
    body = blocks[1:]
    for block in body:
        if block[0] == "heading" and block[1] == 1:
            block[3].fail("a second # heading (the first is the page's title)")
    titles = [plain_inline(parse_inline(b[2], b[3])).upper() for b in body if b[0] == "heading" and b[1] == 2]
    if body and body[0][0] != "heading":
        out.append(".SH DESCRIPTION")
    render_blocks(body, out, {2: "SH", 3: "SS"})
    references = see_also_line([(PROGRAM, "1")] + [(p, "1") for p in command_pages
                                                   if p in (PROGRAM + "-play", PROGRAM + "-check")])
    if "SEE ALSO" not in titles:
        out.append(".SH SEE ALSO")
        out.extend(references)
    else:
        # The pages first, then what the document says.
        at = out.index('.SH "SEE ALSO"') + 1
        out[at:at] = references + [".PP"]
    return name, 5, out
