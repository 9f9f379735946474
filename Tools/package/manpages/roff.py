"""roff escaping and the layout of input lines."""

import re

from . import Failure


# Characters with a classic troff name; every other non-ASCII character becomes \[uXXXX].
NAMED_GLYPHS = {
    "\u00d7": r"\(mu", "\u2192": r"\(->", "\u2190": r"\(<-", "\u2191": r"\(ua", "\u2193": r"\(da",
    "\u2013": r"\(en", "\u2014": r"\(em", "\u2018": r"\(oq", "\u2019": r"\(cq", "\u201c": r"\(lq",
    "\u201d": r"\(rq", "\u2022": r"\(bu", "\u00b0": r"\(de", "\u00a0": r"\~", "\u2212": r"\-",
}

FONT_ESCAPES = {"R": r"\fR", "B": r"\fB", "I": r"\fI", "BI": r"\f(BI"}

# A word that starts with a hyphen: an option (--map, -o) or a negative number (-60). All its
# hyphens are typed as \- (a minus sign: ASCII '-' when copied from the terminal), and \% keeps
# groff from hyphenating it. Hyphens inside words (start-up, pw-jack, C-1) stay hyphens.
OPTION_WORD = re.compile(r"(?<![\w\\-])--?[A-Za-z0-9][\w.-]*")
# A reference to another manual page: jackd(1), bellkeys-map(5).
MAN_REFERENCE = re.compile(r"(?<![\w\\-])([A-Za-z][\w.+-]*)\(([1-9][a-z]*)\)")


def escape_chars(text, minus=False):
    """Escapes backslashes and non-ASCII characters; with `minus`, every '-' becomes \\-."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append(r"\e")
        elif ch == "-" and minus:
            out.append(r"\-")
        elif ch == "\t":
            out.append(" ")
        elif ord(ch) < 32 and ch != "\n":
            raise Failure("control character U+%04X in text: %r" % (ord(ch), text))
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append(NAMED_GLYPHS.get(ch) or r"\[u%04X]" % ord(ch))
    return "".join(out)


def literal(text):
    """Text typed as is (code, option names, paths in code): \\- for '-', and \\% before each word
    so that groff does not hyphenate it."""
    return " ".join(r"\%" + breakable(word, escape_chars(word, minus=True)) if word else ""
                    for word in text.split(" "))


def breakable(word, escaped):
    """A long path may break after its slashes (\\:, no hyphen is shown), so that groff can always
    fill and adjust the line ("cannot adjust line" is a warning lintian reports)."""
    return re.sub(r"(?<=[^/~])/(?=[^/])", r"/\\:", escaped) if len(word) >= 16 and "/" in word else escaped


def prose(text, font="R"):
    """Running text: options and negative numbers get \\-, manual references are set in bold."""
    out = []
    pos = 0
    pattern = re.compile("%s|%s" % (MAN_REFERENCE.pattern, OPTION_WORD.pattern))
    for match in pattern.finditer(text):
        out.append(plain(text[pos:match.start()]))
        if match.group(1):
            out.append(bold_in(font, literal(match.group(1))) + "(" + match.group(2) + ")")
        else:
            out.append(literal(match.group(0)))
        pos = match.end()
    out.append(plain(text[pos:]))
    return "".join(out)


IDENTIFIER = re.compile(r"[/_]|[a-z][A-Z]")


def plain(text):
    """Escaped running text. Paths and identifiers (a slash, an underscore, camelCase) get \\% so
    that groff does not hyphenate them."""
    return " ".join(r"\%" + breakable(word, escape_chars(word)) if IDENTIFIER.search(word) else escape_chars(word)
                    for word in text.split(" "))


def with_font(font, extra):
    """The font `font` with `extra` ("B" or "I") added."""
    parts = set(font.replace("R", "")) | set(extra)
    return "".join(c for c in "BI" if c in parts) or "R"


def bold_in(font, rendered):
    return FONT_ESCAPES[with_font(font, "B")] + rendered + FONT_ESCAPES[font]


def macro_argument(rendered):
    """Rendered text as one macro argument (in double quotes, a double quote as \\(dq)."""
    return '"' + rendered.replace('"', r"\(dq") + '"'


SENTENCE_END = re.compile(r"(?<=[.!?])((?:\\f[RBI]|\\f\(BI|[)\]\"'])*) +(?=[A-Z]|\\f[BI]|\\f\(BI|\\%|\\\(lq)")


def text_lines(rendered):
    """Rendered running text as input lines: one sentence a line, none starting with '.' or "'"."""
    lines = []
    for line in rendered.split("\n"):
        if line == ".br":
            lines.append(line)
            continue
        line = SENTENCE_END.sub(lambda m: m.group(1) + "\n", line.strip())
        for piece in line.split("\n"):
            piece = piece.strip()
            if not piece:
                continue
            if piece[0] in ".'":
                piece = r"\&" + piece
            lines.append(piece)
    return lines


def wrap(line, width=78):
    """A long text line as several, broken at spaces (never at an escaped space, \\ )."""
    if len(line) <= width or line.startswith("."):
        return [line]
    pieces = []
    while len(line) > width:
        cut = -1
        for k in range(width, 0, -1):
            if line[k] == " " and line[k - 1] != "\\":
                cut = k
                break
        if cut < 0:
            cut = next((k for k in range(width + 1, len(line)) if line[k] == " " and line[k - 1] != "\\"), -1)
            if cut < 0:
                break
        piece = line[:cut].rstrip()
        # A period at the end of an input line ends a sentence for groff; these do not.
        if re.search(r"[.!?][)\]\"']*$", piece):
            piece += r"\&"
        pieces.append(piece)
        line = line[cut:].lstrip()
    pieces.append(line)
    return [r"\&" + p if p[0] in ".'" and not p.startswith(r"\&") else p for p in pieces if p]


TOKEN_SPLIT = re.compile(r"(?<!\\) ")


def no_hyphenation_at_word_starts(line):
    """Moves every \\% to the start of its word: there it keeps groff from hyphenating the word,
    anywhere else it would be a hyphenation point ("(\\%systemctl" could break as "(-")."""
    if r"\%" not in line:
        return line
    return " ".join(r"\%" + token.replace(r"\%", "") if r"\%" in token else token
                    for token in TOKEN_SPLIT.split(line))


def tidy(lines):
    """Drops paragraph macros that do nothing (after .SH, .SS or another .PP) and wraps long text
    lines, so that mandoc -T lint has nothing to say."""
    out = []
    no_fill = False
    for line in lines:
        if line == ".PP" and out and (out[-1].startswith((".SH", ".SS")) or out[-1] == ".PP"):
            continue
        if line in (".nf", ".fi"):
            no_fill = line == ".nf"
        if line.startswith(".BR "):
            out.append(".BR " + no_hyphenation_at_word_starts(line[4:]))
        elif line.startswith(".") or no_fill:
            out.append(line)
        elif out and out[-1] == ".TP":
            out.append(no_hyphenation_at_word_starts(line))
        else:
            out.extend(wrap(no_hyphenation_at_word_starts(line)))
    return out
