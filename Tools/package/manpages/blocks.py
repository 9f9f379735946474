"""Block Markdown: headings (#, ##, ###), paragraphs, lists (nested too), fenced code, pipe tables,
HTML comments (dropped). Anything else is an error. Then blocks to roff."""

import re

from .inline import (HARD_BREAK, Source, code_span_end, markdown_inline, parse_inline, plain_inline,
                     render_inline, upper_inline)
from .roff import escape_chars, macro_argument, text_lines


FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
LIST_ITEM = re.compile(r"^( {0,3})([-*+]|(\d{1,9})[.)])(?:( +)(.*))?$")
THEMATIC_BREAK = re.compile(r"^ {0,3}((\*[ \t]*){3,}|(-[ \t]*){3,}|(_[ \t]*){3,})$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
TABLE_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
HTML_BLOCK = re.compile(r"^ {0,3}<(?:[A-Za-z/!?])")


def indentation(line):
    return len(line) - len(line.lstrip(" "))


def split_table_row(line, where):
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    cells, buf, i = [], [], 0
    while i < len(row):
        ch = row[i]
        if ch == "\\" and i + 1 < len(row):
            buf.append(row[i:i + 2] if row[i + 1] != "|" else "|")
            i += 2
            continue
        if ch == "`":
            end = code_span_end(row, i)
            if end:
                buf.append(row[i:end].replace("\\|", "|"))
                i = end
                continue
        if ch == "|":
            cells.append("".join(buf).strip())
            buf = []
            i += 1
            continue
        buf.append(ch)
        i += 1
    cells.append("".join(buf).strip())
    return cells


def starts_block(line):
    """Whether a line begins a block that interrupts a paragraph."""
    return bool(FENCE.match(line) or HEADING.match(line) or LIST_ITEM.match(line) and LIST_ITEM.match(line).group(5)
                or THEMATIC_BREAK.match(line) or HTML_BLOCK.match(line) or line.lstrip().startswith(">"))


def parse_blocks(lines, path):
    """Parses lines (already without the indentation of an enclosing list item) into blocks;
    each entry of `lines` is (line number in the file, text)."""
    blocks = []
    i = 0
    while i < len(lines):
        number, line = lines[i]
        where = Source(path, number)
        if not line.strip():
            i += 1
            continue
        if line.lstrip().startswith("<!--"):
            while "-->" not in lines[i][1]:
                i += 1
                if i == len(lines):
                    where.fail("an HTML comment that does not end")
            if lines[i][1].split("-->", 1)[1].strip():
                Source(path, lines[i][0]).fail("text after the end of an HTML comment")
            i += 1
            continue
        fence = FENCE.match(line)
        if fence:
            indent, marker = len(fence.group(1)), fence.group(2)
            body = []
            i += 1
            while i < len(lines) and not re.match(r"^ {0,3}%s%s*[ \t]*$" % (re.escape(marker), marker[0]), lines[i][1]):
                text = lines[i][1]
                body.append(text[min(indent, indentation(text)):])
                i += 1
            if i == len(lines):
                where.fail("a code block (%s) that is not closed" % marker)
            i += 1
            blocks.append(("code", body, where))
            continue
        heading = HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if level > 3:
                where.fail("headings below ### are not supported: %s" % line.strip())
            blocks.append(("heading", level, (heading.group(2) or "").strip(), where))
            i += 1
            continue
        if THEMATIC_BREAK.match(line):
            where.fail("horizontal rules are not supported: %s" % line.strip())
        if line.lstrip().startswith(">"):
            where.fail("block quotes are not supported")
        if HTML_BLOCK.match(line):
            where.fail("HTML blocks are not supported: %s" % line.strip())
        if indentation(line) >= 4:
            where.fail("indented code blocks are not supported; use a ``` fence")
        if "|" in line and i + 1 < len(lines) and TABLE_DELIMITER.match(lines[i + 1][1]) and "-" in lines[i + 1][1]:
            header = split_table_row(line, where)
            columns = len(split_table_row(lines[i + 1][1], where))
            if columns != len(header):
                where.fail("the table's header has %d cells and its delimiter row %d" % (len(header), columns))
            rows = []
            i += 2
            while i < len(lines) and lines[i][1].strip() and "|" in lines[i][1] and not starts_block(lines[i][1]):
                cells = split_table_row(lines[i][1], Source(path, lines[i][0]))
                if len(cells) > columns:
                    Source(path, lines[i][0]).fail("a table row with %d cells; the header has %d" % (len(cells), columns))
                rows.append((cells + [""] * (columns - len(cells)), Source(path, lines[i][0])))
                i += 1
            blocks.append(("table", header, rows, where))
            continue
        item = LIST_ITEM.match(line)
        if item:
            i = parse_list(lines, i, path, blocks)
            continue
        # A paragraph: lines up to a blank line or the start of another block.
        raw = [line]
        i += 1
        while i < len(lines) and lines[i][1].strip() and not starts_block(lines[i][1]):
            following = lines[i][1]
            if SETEXT_UNDERLINE.match(following):
                Source(path, lines[i][0]).fail("setext headings (underlined with = or -) are not supported; use #")
            if "|" in following and i + 1 < len(lines) and TABLE_DELIMITER.match(lines[i + 1][1]) and "-" in lines[i + 1][1]:
                break
            raw.append(following)
            i += 1
        pieces = []
        for k, piece in enumerate(raw):
            if k < len(raw) - 1 and (piece.endswith("  ") or piece.rstrip().endswith("\\")):
                pieces.append(piece.strip().rstrip("\\").rstrip() + HARD_BREAK)
            else:
                pieces.append(piece.strip() + ("" if k == len(raw) - 1 else " "))
        blocks.append(("para", "".join(pieces), where))
    return blocks


def parse_list(lines, i, path, blocks):
    """Parses the list starting at lines[i]; appends it to blocks and returns the next index."""
    first = LIST_ITEM.match(lines[i][1])
    ordered = first.group(3) is not None
    start = int(first.group(3)) if ordered else 1
    delimiter = first.group(2)[-1]
    items = []
    where = Source(path, lines[i][0])
    while i < len(lines):
        match = LIST_ITEM.match(lines[i][1])
        if not match or (match.group(3) is not None) != ordered or (ordered and match.group(2)[-1] != delimiter):
            break
        marker_width = len(match.group(1)) + len(match.group(2))
        if match.group(4) is None or not match.group(5):
            content_indent, first_text = marker_width + 1, ""
        elif len(match.group(4)) > 4:
            Source(path, lines[i][0]).fail("a list item that starts with indented code is not supported")
        else:
            content_indent, first_text = marker_width + len(match.group(4)), match.group(5)
        body = [(lines[i][0], first_text)]
        i += 1
        previous_blank = False
        in_fence = FENCE.match(first_text) is not None
        while i < len(lines):
            number, text = lines[i]
            if not text.strip():
                body.append((number, ""))
                previous_blank = True
                i += 1
                continue
            if indentation(text) >= content_indent:
                stripped = text[content_indent:]
                if FENCE.match(stripped):
                    in_fence = not in_fence
                body.append((number, stripped))
                previous_blank = False
                i += 1
                continue
            # Less indented: a lazy continuation of the item's paragraph, or the item's end.
            if not previous_blank and not in_fence and not starts_block(text) and not LIST_ITEM.match(text) \
                    and body[-1][1].strip() and not FENCE.match(body[-1][1]):
                body.append((number, text.strip()))
                i += 1
                continue
            break
        while body and not body[-1][1].strip():
            body.pop()
        items.append(parse_blocks(body, path))
        # A blank line and then something that is not the next item ends the list.
    blocks.append(("list", ordered, start, items, where))
    return i


# ---------------------------------------------------------------------------------------------
# Blocks to roff

def render_blocks(blocks, out, heading_levels, top=True):
    """Appends the roff of `blocks` to `out`. heading_levels maps a Markdown level to SH or SS."""
    for block in blocks:
        kind = block[0]
        if kind == "heading":
            _, level, text, where = block
            macro = heading_levels.get(level)
            if macro is None:
                where.fail("a level-%d heading is not allowed here" % level)
            if not top:
                where.fail("headings inside list items are not supported")
            nodes = parse_inline(text, where)
            if macro == "SH":
                nodes = upper_inline(nodes)
            out.append(".%s %s" % (macro, macro_argument(render_inline(nodes))))
        elif kind == "para":
            out.append(".PP")
            out.extend(text_lines(markdown_inline(block[1], block[2])))
        elif kind == "code":
            out.append(".PP")
            out.append(".RS 4")
            out.append(".nf")
            for line in block[1]:
                expanded = line.expandtabs(8).rstrip()
                rendered = escape_chars(expanded, minus=True)
                if rendered.startswith((".", "'")):
                    rendered = r"\&" + rendered
                out.append(rendered if rendered else r"\&")
            out.append(".fi")
            out.append(".RE")
        elif kind == "list":
            _, ordered, start, items, where = block
            width = max(4, len(str(start + len(items) - 1)) + 2) if ordered else 2
            for number, item in enumerate(items, start):
                mark = ("%d." % number) if ordered else r"\(bu"
                out.append(".IP %s %d" % (mark, width))
                rest = item
                if item and item[0][0] == "para":
                    out.extend(text_lines(markdown_inline(item[0][1], item[0][2])))
                    rest = item[1:]
                if rest:
                    out.append(".RS %d" % width)
                    render_blocks(rest, out, heading_levels, top=False)
                    out.append(".RE")
        elif kind == "table":
            _, header, rows, where = block
            header_nodes = [plain_inline(parse_inline(cell, where)) for cell in header]
            for cells, row_where in rows:
                out.append(".TP")
                if not cells[0]:
                    row_where.fail("a table row without a first cell (the tag)")
                # The tag is one input line, whatever its sentences.
                out.append(" ".join(l for l in text_lines(markdown_inline(cells[0], row_where)) if l != ".br"))
                body = []
                for column in range(1, len(cells)):
                    if not cells[column]:
                        continue
                    text = markdown_inline(cells[column], row_where)
                    if column < len(cells) - 1 and header_nodes[column]:
                        text = r"\fI" + escape_chars(header_nodes[column]) + r":\fR " + text
                    body.append(text)
                for k, text in enumerate(body):
                    if k:
                        out.append(".br")
                    out.extend(text_lines(text))
        else:
            raise AssertionError(kind)
