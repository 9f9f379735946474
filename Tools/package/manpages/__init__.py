"""The parts of Tools/package/make-manpages: roff (escaping and line layout), inline and blocks
(the Markdown subset), commands (pages from the argument parser's ToolInfo), documents (the
hand-written sections and the map page), checks (the formatters' warnings)."""

import os


# The checkout: Tools/package/manpages/../../..
CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
PROGRAM = "bellkeys"


class Failure(Exception):
    """A problem worded for the user: printed as `make-manpages: error: ...`, exit status 1."""
