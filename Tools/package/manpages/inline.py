"""Inline Markdown: `code`, **bold**, *italic* (_italic_), [text](url), <url>, \\-escapes."""

import re

from . import Failure
from .roff import FONT_ESCAPES, bold_in, literal, prose, with_font


ASCII_PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
HARD_BREAK = "\x00"


class Source:
    """Where a piece of Markdown comes from, for error messages."""

    def __init__(self, path, line):
        self.path, self.line = path, line

    def fail(self, message):
        raise Failure("%s:%d: %s" % (self.path, self.line, message))


def is_punctuation(ch):
    return ch in ASCII_PUNCTUATION or (not ch.isalnum() and not ch.isspace() and ord(ch) > 127)


def run_length(s, i, ch):
    """How many `ch` follow one another from s[i]."""
    j = i
    while j < len(s) and s[j] == ch:
        j += 1
    return j - i


def code_span_end(s, i):
    """If a code span starts at s[i], the index after it, else None."""
    n = run_length(s, i, "`")
    j = i + n
    while True:
        j = s.find("`" * n, j)
        if j < 0:
            return None
        run = run_length(s, j, "`")
        if run == n:
            return j + n
        j += run


def matching_bracket(s, i, open_ch, close_ch):
    """The index of the bracket closing the one at s[i], skipping escapes and code spans."""
    depth = 0
    j = i
    while j < len(s):
        ch = s[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "`":
            end = code_span_end(s, j)
            if end:
                j = end
                continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return None


def delimiter_flanking(s, i, n):
    before = s[i - 1] if i > 0 else " "
    after = s[i + n] if i + n < len(s) else " "
    left = not after.isspace() and (not is_punctuation(after) or before.isspace() or is_punctuation(before))
    right = not before.isspace() and (not is_punctuation(before) or after.isspace() or is_punctuation(after))
    if s[i] == "_":
        return (left and (not right or is_punctuation(before)), right and (not left or is_punctuation(after)))
    return left, right


AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>")
HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>|<!--")
ABSOLUTE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def parse_inline(s, where):
    """Parses inline Markdown into nodes: (text, str), (code, str), (strong|em, nodes), (link, nodes, url)."""
    nodes, buf = [], []

    def flush():
        if buf:
            nodes.append(("text", "".join(buf)))
            buf.clear()

    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] in ASCII_PUNCTUATION:
            buf.append(s[i + 1])
            i += 2
            continue
        if ch == "`":
            end = code_span_end(s, i)
            n = run_length(s, i, "`")
            if end is None:
                buf.append("`" * n)
                i += n
                continue
            content = s[i + n:end - n].replace("\n", " ").replace(HARD_BREAK, " ")
            if len(content) > 1 and content[0] == " " and content[-1] == " " and content.strip():
                content = content[1:-1]
            flush()
            nodes.append(("code", content))
            i = end
            continue
        if s.startswith("![", i):
            where.fail("images are not supported: %s" % s[i:i + 40])
        if ch == "[":
            close = matching_bracket(s, i, "[", "]")
            if close is not None and s[close + 1:close + 2] == "(":
                paren = matching_bracket(s, close + 1, "(", ")")
                if paren is None:
                    where.fail("a link without its closing parenthesis: %s" % s[i:i + 40])
                target = s[close + 2:paren].strip()
                if re.search(r"\s", target):
                    where.fail("link titles are not supported: %s" % s[i:paren + 1])
                flush()
                nodes.append(("link", parse_inline(s[i + 1:close], where), target))
                i = paren + 1
                continue
            if close is not None and s[close + 1:close + 2] == "[" or (
                    close is not None and re.match(r"\s*:", s[close + 1:])):
                where.fail("reference links are not supported: %s" % s[i:i + 40])
            buf.append(ch)
            i += 1
            continue
        if ch == "<":
            if s.startswith("<!--", i):
                # An HTML comment inside a paragraph (the docs' test markers, `<!-- not run: why
                # -->`): invisible on the rendered page, left out of the man page.
                end = s.find("-->", i + 4)
                if end < 0:
                    where.fail("an HTML comment that does not end: %s" % s[i:i + 40])
                i = end + 3
                continue
            m = AUTOLINK.match(s, i)
            if m:
                flush()
                nodes.append(("link", [("text", m.group(1))], m.group(1)))
                i = m.end()
                continue
            if HTML_TAG.match(s, i):
                where.fail("inline HTML is not supported: %s" % s[i:i + 40])
            buf.append(ch)
            i += 1
            continue
        if ch in "*_":
            n = run_length(s, i, ch)
            can_open, can_close = delimiter_flanking(s, i, n)
            flush()
            nodes.append(Delimiter(ch, n, can_open, can_close, i))
            i += n
            continue
        buf.append(ch)
        i += 1
    flush()
    return resolve_emphasis(nodes, s, where)


class Delimiter:
    """A run of * or _ that may open or close emphasis (CommonMark's delimiter run)."""

    def __init__(self, ch, count, can_open, can_close, position):
        self.ch, self.count, self.original = ch, count, count
        self.can_open, self.can_close, self.position = can_open, can_close, position


def resolve_emphasis(items, s, where):
    """CommonMark's "process emphasis": each closer takes the nearest opener of its kind before
    it; two of each make strong, one em. Runs left over are text; a left-over ** that could
    open is an error (most likely a typo)."""
    i = 0
    while i < len(items):
        closer = items[i]
        if not isinstance(closer, Delimiter) or not closer.can_close or closer.count == 0:
            i += 1
            continue
        opener_at = None
        for j in range(i - 1, -1, -1):
            opener = items[j]
            if not isinstance(opener, Delimiter) or opener.ch != closer.ch or not opener.can_open \
                    or opener.count == 0:
                continue
            if (opener.can_close or closer.can_open) and (opener.original + closer.original) % 3 == 0 \
                    and not (opener.original % 3 == 0 and closer.original % 3 == 0):
                continue
            opener_at = j
            break
        if opener_at is None:
            i += 1
            continue
        opener = items[opener_at]
        use = 2 if opener.count >= 2 and closer.count >= 2 else 1
        opener.count -= use
        closer.count -= use
        inner = merge_text([delimiter_text(x) for x in items[opener_at + 1:i]])
        items[opener_at + 1:i] = [("strong" if use == 2 else "em", inner)]
        i = opener_at + 2
    for item in items:
        if isinstance(item, Delimiter) and item.count >= 2 and item.can_open:
            where.fail("%s that nothing closes: %s" % (item.ch * item.count, s[item.position:item.position + 40]))
    return merge_text([delimiter_text(x) for x in items])


def delimiter_text(item):
    if isinstance(item, Delimiter):
        return ("text", item.ch * item.count)
    return item


def merge_text(nodes):
    merged = []
    for node in nodes:
        if node[0] == "text" and not node[1]:
            continue
        if node[0] == "text" and merged and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + node[1])
        else:
            merged.append(node)
    return merged


def render_inline(nodes, font="R"):
    out = []
    for node in nodes:
        kind = node[0]
        if kind == "text":
            parts = node[1].split(HARD_BREAK)
            out.append("\n.br\n".join(prose(part, font) for part in parts))
        elif kind == "code":
            out.append(bold_in(font, literal(node[1])))
        elif kind in ("strong", "em"):
            inner = with_font(font, "B" if kind == "strong" else "I")
            out.append(FONT_ESCAPES[inner] + render_inline(node[1], inner) + FONT_ESCAPES[font])
        elif kind == "link":
            text_nodes, url = node[1], node[2]
            out.append(render_inline(text_nodes, font))
            shown = "".join(n[1] for n in text_nodes if n[0] in ("text", "code"))
            if ABSOLUTE_URL.match(url) and shown != url and not url.startswith("mailto:" + shown):
                out.append(" " + FONT_ESCAPES[with_font(font, "I")] + literal(url) + FONT_ESCAPES[font])
    return "".join(out)


def markdown_inline(text, where, font="R"):
    return render_inline(parse_inline(text, where), font)


def plain_inline(nodes):
    return "".join(n[1] if n[0] in ("text", "code") else plain_inline(n[1]) for n in nodes)


def upper_inline(nodes):
    """Headings of sections in capitals, but not the code in them."""
    result = []
    for node in nodes:
        if node[0] == "text":
            result.append(("text", node[1].upper()))
        elif node[0] in ("strong", "em"):
            result.append((node[0], upper_inline(node[1])))
        elif node[0] == "link":
            result.append(("link", upper_inline(node[1]), node[2]))
        else:
            result.append(node)
    return result
