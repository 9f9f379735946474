"""Pages from the argument parser's ToolInfo (`bellkeys --experimental-dump-help`)."""

import json
import os
import re
import subprocess

from . import PROGRAM, Failure
from .inline import HARD_BREAK, Source, code_span_end, render_inline, run_length
from .roff import escape_chars, literal, macro_argument, text_lines


def run(argv):
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              timeout=60, env=dict(os.environ, LC_ALL="C.UTF-8", COLUMNS="80"))
    except OSError as error:
        raise Failure("cannot run %s: %s" % (argv[0], error.strerror))
    except subprocess.TimeoutExpired:
        raise Failure("%s did not finish in 60 s" % " ".join(argv))
    if done.returncode != 0:
        raise Failure("%s exited with status %d: %s" % (" ".join(argv), done.returncode,
                                                         done.stderr.decode("utf-8", "replace").strip()))
    return done.stdout.decode("utf-8")


def page_name(command):
    return "-".join((command.get("superCommands") or []) + [command["commandName"]])


def spoken_name(command):
    return " ".join((command.get("superCommands") or []) + [command["commandName"]])


def sorted_names(argument):
    names = argument.get("names") or []
    return ([n for n in names if n["kind"] == "short"] + [n for n in names if n["kind"] == "long"]
            + [n for n in names if n["kind"] == "longWithSingleDash"])


def option_name(name):
    return {"short": "-", "long": "--", "longWithSingleDash": "-"}[name["kind"]] + name["name"]


def is_builtin(argument):
    """--help and --version: shown in OPTIONS, left out of the synopsis (as in the help's usage)."""
    names = {option_name(n) for n in argument.get("names") or []}
    return argument["kind"] == "flag" and (names <= {"-h", "--help", "-help"} or names == {"--version"})


def value_name(argument):
    value = argument.get("valueName")
    if not value:
        raise Failure("argument %s has no value name" % json.dumps(argument.get("names")))
    return r"\fI" + escape_chars(value) + r"\fR"


def synopsis_item(argument):
    kind = argument["kind"]
    if kind == "positional":
        item = value_name(argument)
        if argument.get("parsingStrategy") == "postTerminator":
            item = r"\fB\-\-\fR\ " + item
    else:
        preferred = argument.get("preferredName") or sorted_names(argument)[0]
        item = r"\fB" + literal(option_name(preferred)) + r"\fR"
        if kind == "option":
            item += r"\ " + value_name(argument)
        elif kind != "flag":
            raise Failure("unknown kind of argument %r" % kind)
    if argument.get("isRepeating"):
        item += r"\ .\|.\|."
    if argument.get("isOptional"):
        item = "[" + item + "]"
    if argument.get("isRepeating"):
        item += r"\&"  # "...]" at the end of a line would end a sentence for groff
    return item


def command_text(text):
    """Text from the parser: paragraphs at blank lines, line breaks kept (as in the help), `code`
    in bold, options with \\-. The words are the parser's."""
    where = Source("the argument parser's text", 0)
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", text.strip("\n")) if p.strip()]
    result = []
    for paragraph in paragraphs:
        lines = [line.strip() for line in paragraph.split("\n")]
        nodes = parse_code_only(HARD_BREAK.join(lines), where)
        result.append(render_inline(nodes))
    return result


def parse_code_only(text, where):
    """Only `code` is Markdown in the parser's texts: an asterisk or underscore there is literal."""
    nodes, pos = [], 0
    i = 0
    while i < len(text):
        if text[i] == "`":
            end = code_span_end(text, i)
            if end:
                n = run_length(text, i, "`")
                if pos < i:
                    nodes.append(("text", text[pos:i]))
                nodes.append(("code", text[i + n:end - n].strip(" ") or text[i + n:end - n]))
                i = pos = end
                continue
        i += 1
    if pos < len(text):
        nodes.append(("text", text[pos:]))
    return nodes


def paragraphs_out(paragraphs, out, first_macro, next_macro):
    for k, paragraph in enumerate(paragraphs):
        if first_macro or k:
            out.append(first_macro if k == 0 else next_macro)
        out.extend(text_lines(paragraph))


def argument_entry(argument, out):
    """One option, flag or argument of OPTIONS, as .TP: its names, then the parser's texts."""
    if argument["kind"] == "positional":
        tag = value_name(argument)
    else:
        tag = ", ".join(r"\fB" + literal(option_name(n)) + r"\fR" for n in sorted_names(argument))
        if argument["kind"] == "option":
            tag += " " + value_name(argument)
    out.append(".TP")
    out.append(tag)
    abstract = command_text(argument.get("abstract") or "")
    values = argument.get("allValues") or []
    default = argument.get("defaultValue")
    said = " ".join([argument.get("abstract") or "", argument.get("discussion") or ""])
    notes = []
    if values:
        notes.append("values: " + ", ".join(r"\fB" + literal(v) + r"\fR" for v in values))
    # A default the text already states (as "(default: 1024)") is not repeated.
    if default is not None and not re.search(r"default:\s*%s\b" % re.escape(default), said, re.IGNORECASE):
        notes.append("default: " + r"\fB" + literal(default) + r"\fR")
    if notes:
        if abstract:
            abstract[-1] += " (" + "; ".join(notes) + ")"
        else:
            abstract = ["(" + "; ".join(notes) + ")"]
    if not abstract:
        abstract = [""]
    paragraphs_out([a for a in abstract if a], out, None, ".IP")
    paragraphs_out(command_text(argument.get("discussion") or ""), out, ".IP", ".IP")
    descriptions = argument.get("allValueDescriptions") or {}
    if descriptions:
        out.append(".RS")
        for value in values or sorted(descriptions):
            if value in descriptions:
                out.append(".TP")
                out.append(r"\fB" + literal(value) + r"\fR")
                paragraphs_out(command_text(descriptions[value]), out, None, ".IP")
        out.append(".RE")


def title_header(name, section, date, version, manual, source):
    return [
        r'.\" Generated by Tools/package/make-manpages from %s; do not edit.' % source,
        '.TH %s %d %s %s %s' % (escape_chars(name.upper()), section, macro_argument(date),
                                macro_argument(escape_chars(version)), macro_argument(manual)),
    ]


def name_section(name, description):
    description = description.strip()
    if description.endswith(".") and not description.endswith(".."):
        description = description[:-1]
    return [".SH NAME", escape_chars(name) + r" \- " + "".join(command_text(description)).replace("\n.br\n", " ")]


def shown(items):
    return [x for x in items or [] if x.get("shouldDisplay", True)]


def pages_of(command):
    """The subcommands that get a page: shown ones, not swift-argument-parser's own `help`."""
    return [c for c in shown(command.get("subcommands")) if c["commandName"] != "help"]


def see_also_line(references):
    lines = []
    for k, (name, section) in enumerate(references):
        comma = "," if k < len(references) - 1 else ""
        lines.append(".BR %s (%s)%s" % (literal(name), section, comma))
    return lines


def command_page(command, date, version, extra_sections, is_root, extra_path=""):
    """One command's page; `extra_sections` (from `extra_path`) go after the generated ones."""
    name = page_name(command)
    out = title_header(name, 1, date, version, "User Commands", "`%s --experimental-dump-help`" % PROGRAM
                       + (" and Tools/package/%s" % os.path.basename(extra_path) if extra_sections else ""))
    out += name_section(name, command.get("abstract") or "")
    arguments = shown(command.get("arguments"))
    subcommands = pages_of(command)

    out.append(".SH SYNOPSIS")
    default = command.get("defaultSubcommand")
    items = [synopsis_item(a) for a in arguments if not is_builtin(a)]
    if subcommands:
        word = r"\fIcommand\fR\ [\fIoptions\fR]"
        items.append("[" + word + "]" if default else word)
    synopses = [items]
    if default:
        synopses.append([r"[\fI%s options\fR]" % escape_chars(default)])
    for items in synopses:
        if items:
            # A hanging indent: the options' lines start after the command's name.
            out.append(".ad l")
            out.append(".TP %dn" % (len(spoken_name(command)) + 1))
            out.append(".B %s" % literal(spoken_name(command)).replace(r"\%", ""))
            out.extend(items)
            out.append(".ad")
        else:
            out.append(".B %s" % literal(spoken_name(command)).replace(r"\%", ""))

    out.append(".SH DESCRIPTION")
    description = command_text(command.get("abstract") or "") + command_text(command.get("discussion") or "")
    paragraphs_out(description, out, None, ".PP")
    if default:
        out.append(".PP")
        out.append(r"Without a command, \fB%s\fR runs \fB%s %s\fR." % (
            literal(spoken_name(command)), literal(spoken_name(command)), literal(default)))

    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            out.append(".TP")
            tag = r"\fB" + literal(sub["commandName"]) + r"\fR"
            if sub["commandName"] == default:
                tag += " (default)"
            out.append(tag)
            paragraphs_out(command_text(sub.get("abstract") or ""), out, None, ".IP")
            out.append("See")
            out.append(".BR %s (1)." % literal(page_name(sub)))

    positionals = [a for a in arguments if a["kind"] == "positional"]
    options = [a for a in arguments if a["kind"] != "positional"]
    if positionals:
        out.append(".SH ARGUMENTS")
        for argument in positionals:
            argument_entry(argument, out)
    # Options in a titled group (@OptionGroup(title:)) get a section of that title after OPTIONS,
    # as in the help.
    titles = []
    for argument in options:
        if argument.get("sectionTitle") not in titles:
            titles.append(argument.get("sectionTitle"))
    titles.sort(key=lambda t: t is not None)
    for title in titles:
        out.append(".SH %s" % macro_argument(escape_chars(title.upper())) if title else ".SH OPTIONS")
        for argument in options:
            if argument.get("sectionTitle") == title:
                argument_entry(argument, out)

    parents = command.get("superCommands") or []
    see_also = [("-".join(parents[:k]), "1") for k in range(1, len(parents) + 1)]
    takes_map = any(n["name"] == "map" for a in arguments for n in a.get("names") or [])
    if is_root or takes_map:
        see_also.append((PROGRAM + "-map", "5"))
    see_also += [(page_name(sub), "1") for sub in subcommands]
    hand_see_also = None
    for title, body in extra_sections:
        if title == "SEE ALSO":
            hand_see_also = body
            continue
        out.append(".SH %s" % macro_argument(escape_chars(title)))
        out.extend(body)
    out.append(".SH SEE ALSO")
    out.extend(see_also_line(see_also))
    if hand_see_also:
        # The hand-written references go on from the generated ones, in the same paragraph.
        if hand_see_also[0] == ".PP":
            out[-1] += ","
            hand_see_also = hand_see_also[1:]
        out.extend(hand_see_also)
    return name, 1, out
