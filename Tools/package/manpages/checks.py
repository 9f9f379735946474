"""The formatters' checks of a written page: groff, man, mandoc, lexgrog."""

import os
import shutil
import subprocess

# mandoc's style notes: shown, not counted as warnings.
STYLE_NOTES = []


def check_page(path):
    """Runs the formatters' checks on one page; returns the warnings (lines)."""
    warnings = []

    def tool(argv, env=None, keep=lambda line: True):
        try:
            done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                  env=dict(os.environ, **(env or {})), timeout=60)
        except OSError as error:
            return ["%s: cannot run %s: %s" % (path, argv[0], error.strerror)]
        lines = [l for l in done.stderr.decode("utf-8", "replace").splitlines() if l.strip() and keep(l)]
        if done.returncode != 0 and not lines:
            lines = ["%s exited with status %d" % (" ".join(argv), done.returncode)]
        return lines

    if shutil.which("groff"):
        warnings += ["groff: " + l for l in tool(["groff", "-man", "-Tutf8", "-ww", "-z", path])]
    if shutil.which("man"):
        # As lintian runs it (manpage-has-errors-from-man).
        warnings += ["man: " + l for l in tool(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", path],
                                               env={"LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "80"})]
    if shutil.which("mandoc"):
        try:
            done = subprocess.run(["mandoc", "-T", "lint", "-W", "style", path], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
            for line in done.stdout.decode("utf-8", "replace").splitlines():
                # Only the formatters' warnings count; mandoc's style notes are shown, not counted.
                if line.strip():
                    (warnings if " STYLE: " not in line else STYLE_NOTES).append("mandoc: " + line)
        except OSError as error:
            warnings.append("mandoc: cannot run: %s" % error.strerror)
    if shutil.which("lexgrog"):
        # The whatis entry, as lintian checks it (manpage-has-bad-whatis-entry).
        try:
            done = subprocess.run(["lexgrog", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=60)
            if done.returncode != 0:
                warnings.append("lexgrog: " + done.stdout.decode("utf-8", "replace").strip())
        except OSError as error:
            warnings.append("lexgrog: cannot run: %s" % error.strerror)
    return warnings

